import { defineConfig } from 'vite';

// Static files the gateway's admin listener serves under /admin/: relative asset URLs, no inline scripts or
// styles (the page's Content-Security-Policy allows only its own files).
export default defineConfig({
  base: '/admin/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
});
