/**
 * The partition run's network: one Linux bridge made by the run, one network namespace per node joined to it by a
 * veth pair, addresses from a private 10.x.y.0/24 that exists only there (the root namespace holds `.1` on the
 * bridge to reach the gateways; nothing forwards or routes it out). Names carry the run's id, so two runs never
 * meet. Faults are rules in the node's own namespace (a chain `TGFAULT` of iptables, a `tbf` queue of tc):
 * the root namespace's firewall is never touched.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

/** One node of the run: its namespace and its address on the bridge. */
export interface NetNode {
  readonly name: string;
  readonly ns: string;
  readonly ip: string;
}

export type Direction = 'both' | 'in' | 'out';

const run = (command: string, args: readonly string[]): string =>
  execFileSync(command, [...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

const quiet = (command: string, args: readonly string[]): void => {
  try {
    run(command, args);
  } catch {
    // already gone
  }
};

/** Why network namespaces cannot be made here (undefined: they can). */
export function netnsUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `network namespaces need Linux (this is ${process.platform})`;
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'network namespaces need root';
  for (const tool of ['ip', 'iptables', 'tc']) {
    try {
      run('sh', ['-c', `command -v ${tool}`]);
    } catch {
      return `'${tool}' is not installed`;
    }
  }
  const probe = `tgprobe${randomBytes(3).toString('hex')}`;
  try {
    run('ip', ['netns', 'add', probe]);
    run('ip', ['netns', 'exec', probe, 'iptables', '-S']);
  } catch (error) {
    return `'ip netns add' or iptables inside it failed: ${(error as Error).message.split('\n')[0]}`;
  } finally {
    quiet('ip', ['netns', 'del', probe]);
  }
  return undefined;
}

/** A /24 in 10.0.0.0/8 that no route of this machine covers, picked at random (not from the seed). */
function freeSubnet(): string {
  const routes = run('ip', ['-4', 'route', 'show', 'table', 'all']);
  for (let attempt = 0; attempt < 50; attempt++) {
    const [a, b] = randomBytes(2);
    const second = 200 + ((a as number) % 50);
    const subnet = `10.${second}.${b as number}`;
    const covered = [`${subnet}.`, `10.${second}.0.0/16`, '10.0.0.0/8'].some((prefix) => routes.includes(prefix));
    if (!covered) return subnet;
  }
  throw new Error('no free 10.x.y.0/24 for the run');
}

/** The run's bridge and namespaces; `destroy` removes all of them (also after a partial start). */
export class RunNetwork {
  readonly id = randomBytes(2).toString('hex');
  readonly subnet = freeSubnet();
  readonly bridge = `tgp${this.id}br`;
  /** The root namespace's address on the bridge (the clients). */
  readonly hostIp = `${this.subnet}.1`;
  readonly nodes: NetNode[] = [];
  readonly #veths: string[] = [];
  #bridgeMade = false;

  /** Makes the bridge; call once before `addNode`. */
  up(): void {
    run('ip', ['link', 'add', this.bridge, 'type', 'bridge']);
    this.#bridgeMade = true;
    run('ip', ['addr', 'add', `${this.hostIp}/24`, 'dev', this.bridge]);
    run('ip', ['link', 'set', this.bridge, 'up']);
  }

  /** A namespace `tgp<id>-<name>` on the bridge at `<subnet>.<host>`, loopback up, an empty TGFAULT chain hooked in. */
  addNode(name: string, host: number): NetNode {
    const ns = `tgp${this.id}-${name}`;
    const veth = `tgp${this.id}v${host}`;
    const peer = `tgp${this.id}p${host}`;
    const node = { name, ns, ip: `${this.subnet}.${host}` };
    run('ip', ['netns', 'add', ns]);
    this.nodes.push(node);
    run('ip', ['link', 'add', veth, 'type', 'veth', 'peer', 'name', peer]);
    this.#veths.push(veth);
    run('ip', ['link', 'set', peer, 'netns', ns]);
    run('ip', ['link', 'set', veth, 'master', this.bridge, 'up']);
    const inNs = (...args: string[]): string => run('ip', ['netns', 'exec', ns, ...args]);
    inNs('ip', 'link', 'set', peer, 'name', 'eth0');
    inNs('ip', 'addr', 'add', `${node.ip}/24`, 'dev', 'eth0');
    inNs('ip', 'link', 'set', 'eth0', 'up');
    inNs('ip', 'link', 'set', 'lo', 'up');
    inNs('iptables', '-N', 'TGFAULT');
    inNs('iptables', '-I', 'INPUT', '-j', 'TGFAULT');
    inNs('iptables', '-I', 'OUTPUT', '-j', 'TGFAULT');
    return node;
  }

  /** Drops what `node` exchanges with `peers`: both ways, only what comes in, or only what goes out. */
  cut(node: NetNode, peers: readonly NetNode[], direction: Direction): void {
    for (const peer of peers) {
      if (direction !== 'out') this.#rule(node, ['-A', 'TGFAULT', '-s', peer.ip, '-j', 'DROP']);
      if (direction !== 'in') this.#rule(node, ['-A', 'TGFAULT', '-d', peer.ip, '-j', 'DROP']);
    }
  }

  /** Drops every `every`-th packet `node` receives from `peers` (deterministic: iptables' nth mode). */
  lossy(node: NetNode, peers: readonly NetNode[], every: number): void {
    for (const peer of peers) {
      this.#rule(node, [
        '-A',
        'TGFAULT',
        '-s',
        peer.ip,
        '-m',
        'statistic',
        '--mode',
        'nth',
        '--every',
        String(every),
        '--packet',
        '0',
        '-j',
        'DROP',
      ]);
    }
  }

  /** Limits what `node` sends to `kbit` per second (tc tbf: a slow, queueing link). */
  slow(node: NetNode, kbit: number): void {
    run('ip', [
      'netns',
      'exec',
      node.ns,
      'tc',
      'qdisc',
      'replace',
      'dev',
      'eth0',
      'root',
      'tbf',
      'rate',
      `${kbit}kbit`,
      'burst',
      '16kb',
      'latency',
      '2s',
    ]);
  }

  /** Removes every fault rule and queue of `node` (its links work again). */
  heal(node: NetNode): void {
    this.#rule(node, ['-F', 'TGFAULT']);
    quiet('ip', ['netns', 'exec', node.ns, 'tc', 'qdisc', 'del', 'dev', 'eth0', 'root']);
  }

  healAll(): void {
    for (const node of this.nodes) this.heal(node);
  }

  #rule(node: NetNode, args: readonly string[]): void {
    run('ip', ['netns', 'exec', node.ns, 'iptables', ...args]);
  }

  /** `ip netns exec <ns> command args…`: what a process started inside the node runs. */
  static wrap(node: NetNode, command: string, args: readonly string[]): [string, string[]] {
    return ['ip', ['netns', 'exec', node.ns, command, ...args]];
  }

  /** Deletes every veth, namespace and the bridge this run made; never throws. */
  destroy(): void {
    for (const veth of this.#veths.splice(0)) quiet('ip', ['link', 'del', veth]);
    for (const node of this.nodes.splice(0)) quiet('ip', ['netns', 'del', node.ns]);
    if (this.#bridgeMade) quiet('ip', ['link', 'del', this.bridge]);
    this.#bridgeMade = false;
  }
}
