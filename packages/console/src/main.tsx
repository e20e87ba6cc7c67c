import { render } from 'preact';
import { useState } from 'preact/hooks';
import { session } from './api.js';
import { Console } from './console.js';
import './style.css';

function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const submit = async (event: Event) => {
    event.preventDefault();
    const res = await fetch('/admin/api/workers', { headers: { Authorization: `Bearer ${token}` } });
    if (res.status === 401) {
      setError('That token is not the admin token.');
      return;
    }
    session.signIn(token);
    onSignedIn();
  };
  return (
    <form class="sign-in" onSubmit={submit}>
      <h1>taskgate console</h1>
      <label>
        Admin token
        <input
          id="token"
          type="password"
          autocomplete="off"
          value={token}
          onInput={(event) => setToken((event.target as HTMLInputElement).value)}
        />
      </label>
      <button id="sign-in" type="submit" disabled={token === ''}>
        Sign in
      </button>
      {error !== '' && <p class="error">{error}</p>}
    </form>
  );
}

function App() {
  const [signedIn, setSignedIn] = useState(session.token() !== null);
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  return (
    <Console
      onSignOut={() => {
        session.signOut();
        setSignedIn(false);
      }}
    />
  );
}

const root = document.getElementById('app');
if (root !== null) render(<App />, root);
