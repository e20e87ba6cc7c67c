import { Keys, TaskOutbox, type TaskRef, TaskStore } from '@taskgate/core';
import { rawInitialize, sleepMs, useRedis } from '@taskgate/test-harness';
import { afterEach, describe, expect, it } from 'vitest';
import { CURSOR_SECRET, type Stack, useStacks } from './support/stack.js';

// A session's GET stream writes its status notifications without logging them (the session's feed holds
// them) under ids that name both its log and feed positions; resuming it, on any gateway, replays its log
// and reads the feed again between the logged events, so the client gets exactly what it missed.

interface SseEvent {
  readonly id?: string;
  readonly data: string;
}

/** A raw SSE reader: every event with its id, so a test can resume from any of them. */
class SseReader {
  readonly events: SseEvent[] = [];
  readonly #controller = new AbortController();
  #status = 0;
  #done: Promise<void> = Promise.resolve();

  static async open(url: string, headers: Record<string, string>): Promise<SseReader> {
    const reader = new SseReader();
    const response = await fetch(url, { headers, signal: reader.#controller.signal });
    reader.#status = response.status;
    reader.#done = reader.#read(response);
    return reader;
  }

  get status(): number {
    return this.#status;
  }

  /** Resolves when the response ended (or was killed). */
  get ended(): Promise<void> {
    return this.#done;
  }

  /** The JSON-RPC messages (events with data). */
  messages(): Record<string, unknown>[] {
    return this.events.filter((event) => event.data !== '').map((event) => JSON.parse(event.data));
  }

  async until(count: number, what: string): Promise<void> {
    const deadline = Date.now() + 5000;
    while (this.events.length < count) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (${this.events.length} of ${count})`);
      await sleepMs(10);
    }
  }

  async kill(): Promise<void> {
    this.#controller.abort();
    await this.#done;
  }

  async #read(response: Response): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body ?? []) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const lines = buffer.slice(0, end).split('\n');
          buffer = buffer.slice(end + 2);
          const id = lines.find((line) => line.startsWith('id: '))?.slice(4);
          const data = lines.filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim());
          if (data.length > 0) this.events.push({ ...(id !== undefined && { id }), data: data.join('\n') });
        }
      }
    } catch {
      // Killed.
    }
  }
}

const getHeaders = (sessionId: string, lastEventId?: string): Record<string, string> => ({
  Accept: 'text/event-stream',
  'Mcp-Session-Id': sessionId,
  'MCP-Protocol-Version': '2025-11-25',
  ...(lastEventId !== undefined && { 'Last-Event-ID': lastEventId }),
});

/** Tasks of a session driven straight through core: status changes and outbox messages no stream carries. */
function sessionTasks(stack: Stack, sessionId: string) {
  const store = new TaskStore({ redis: stack.redis, keys: stack.keys, cursorSecret: CURSOR_SECRET });
  const outbox = new TaskOutbox({ redis: stack.redis, keys: stack.keys });
  return {
    create: async (): Promise<TaskRef> => {
      const { taskId, ownerId } = await store.create({ owner: sessionId, session: sessionId, tool: 'sleep' });
      return { taskId, ownerId };
    },
    status: (ref: TaskRef, message: string) => store.setStatusMessage(ref, message),
    log: (ref: TaskRef, n: number) => outbox.append(ref.taskId, { type: 'log', level: 'info', data: { n } }),
  };
}

type Message = Record<string, unknown> & { method?: string; params?: Record<string, unknown> };
const described = (message: Message): string => {
  const params = message.params ?? {};
  if (message.method === 'notifications/tasks/status') return `status ${String(params.statusMessage)}`;
  if (message.method === 'notifications/message') return `log ${(params.data as { n: number }).n}`;
  return String(message.method);
};

describe('resumable session GET streams', () => {
  const redis = useRedis();
  const start = useStacks(redis);
  const readers: SseReader[] = [];
  afterEach(async () => {
    await Promise.all(readers.splice(0).map((reader) => reader.kill()));
  });
  const open = async (stack: Stack, sessionId: string, lastEventId?: string): Promise<SseReader> => {
    const reader = await SseReader.open(stack.url, getHeaders(sessionId, lastEventId));
    readers.push(reader);
    return reader;
  };

  it('[NTF-1][INP-5] resumed on another gateway from any event id, sends exactly the events after it, relayed outbox messages in between included', async () => {
    const [a, b] = [await start({ tools: false }), await start({ tools: false })];
    const sessionId = await rawInitialize(a.url);
    const tasks = sessionTasks(a, sessionId);
    const [one, two] = [await tasks.create(), await tasks.create()];
    const first = await open(a, sessionId);
    await first.until(1, 'the priming event');
    // Status notifications (not logged) between outbox messages relayed on the stream and list_changed news.
    const steps = [
      () => tasks.status(one, 's1'),
      () => tasks.log(one, 1),
      () => tasks.status(two, 's2'),
      () => tasks.status(one, 's3'),
      () => a.redis.publish(a.keys.toolsChannel(), 'x'),
      () => tasks.log(two, 2),
      () => tasks.status(two, 's4'),
      () => tasks.status(one, 's5'),
    ];
    for (const [i, step] of steps.entries()) {
      await step();
      await first.until(i + 2, `event ${i + 1}`);
    }
    await first.kill();
    const sent = first.events;
    expect((first.messages() as Message[]).map(described)).toEqual([
      'status s1',
      'log 1',
      'status s2',
      'status s3',
      'notifications/tools/list_changed',
      'log 2',
      'status s4',
      'status s5',
    ]);
    expect(new Set(sent.map((event) => event.id)).size).toBe(sent.length);

    // The client may have lost any tail of what was written: from every event id, alternately on either
    // gateway, the resumed stream sends exactly the events after it, under the same ids, and nothing more.
    for (let cut = 0; cut < sent.length; cut++) {
      const resumed = await open(cut % 2 === 0 ? b : a, sessionId, sent[cut]?.id);
      expect(resumed.status).toBe(200);
      await resumed.until(sent.length - cut - 1, `the events after event ${cut}`);
      await sleepMs(50);
      expect(resumed.events, `resumed after event ${cut}`).toEqual(sent.slice(cut + 1));
      await resumed.kill();
    }

    // What happens while no stream is connected comes once the client resumes, after what it had.
    await tasks.status(two, 's6');
    await tasks.log(one, 3);
    await tasks.status(one, 's7');
    const last = await open(b, sessionId, sent.at(-1)?.id);
    await last.until(3, 'the events of the gap');
    await sleepMs(100);
    expect((last.messages() as Message[]).map(described)).toEqual(['status s6', 'log 3', 'status s7']);
    const ids = [...sent, ...last.events].map((event) => event.id);
    expect(new Set(ids).size).toBe(ids.length);
    // Every status change of the feed went out once, in feed order.
    const feed = await a.redis.xrange(a.keys.sessionFeed(sessionId), '-', '+');
    const snapshots = feed.flatMap(([, fields]) => (fields[0] === 's' ? [JSON.parse(fields[1] as string)] : []));
    const statuses = ([...first.messages(), ...last.messages()] as Message[]).filter(
      (message) => message.method === 'notifications/tasks/status',
    );
    expect(statuses.map((message) => message.params?.statusMessage)).toEqual(
      snapshots.filter((snapshot) => snapshot.statusMessage !== undefined).map((snapshot) => snapshot.statusMessage),
    );
    expect(statuses.map((message) => message.params?.statusMessage)).toEqual([
      's1',
      's2',
      's3',
      's4',
      's5',
      's6',
      's7',
    ]);
  });

  it('[NTF-1] does not log status notifications: their ids name feed entries, the log holds the priming event and relayed messages', async () => {
    const stack = await start({ tools: false });
    const sessionId = await rawInitialize(stack.url);
    const tasks = sessionTasks(stack, sessionId);
    const task = await tasks.create();
    const reader = await open(stack, sessionId);
    await reader.until(1, 'the priming event');
    const priming = reader.events[0]?.id as string;
    const streamId = priming.slice(0, 26);
    const logKey = stack.keys.sseStream(streamId);
    const head = (await stack.redis.xrevrange(stack.keys.sessionFeed(sessionId), '+', '-', 'COUNT', 1))[0]?.[0];
    expect(await stack.redis.xlen(logKey)).toBe(1);
    expect(await stack.redis.hget(stack.keys.sseState(streamId), 'feed')).toBe(head ?? '0-0');

    for (let i = 1; i <= 5; i++) await tasks.status(task, `step ${i}`);
    await reader.until(6, 'five status notifications');
    await sleepMs(50);
    expect(await stack.redis.xlen(logKey)).toBe(1);
    // Each id: the stream, its last logged event (the priming one), the notification's feed entry.
    const feed = (await stack.redis.xrange(stack.keys.sessionFeed(sessionId), `(${head ?? '0-0'}`, '+')).map(
      ([id]) => id,
    );
    expect(reader.events.slice(1).map((event) => event.id)).toEqual(feed.map((feedId) => `${priming}_${feedId}`));

    // A relayed outbox message is logged, with the feed position it went out at.
    await tasks.log(task, 1);
    await reader.until(7, 'the log message');
    expect(await stack.redis.xlen(logKey)).toBe(2);
    const [[entryId, fields] = ['', []]] = await stack.redis.xrevrange(logKey, '+', '-', 'COUNT', 1);
    expect(fields.slice(2)).toEqual(['f', feed.at(-1)]);
    expect(reader.events[6]?.id).toBe(`${streamId}_${entryId}_${feed.at(-1)}`);
    await tasks.status(task, 'step 6');
    await reader.until(8, 'the sixth status notification');
    expect(await stack.redis.xlen(logKey)).toBe(2);
    expect(reader.events[7]?.id).toMatch(new RegExp(`^${streamId}_${entryId}_\\d+-\\d+$`));
    // The stream's state is not written per notification either: it keeps its starting feed position.
    expect(await stack.redis.hget(stack.keys.sseState(streamId), 'feed')).toBe(head ?? '0-0');
    expect(await stack.redis.hget(stack.keys.sseState(streamId), 'n')).toBe('2');
  });

  it('[NTF-1] relays each status change from its announcement, and reads the feed when one does not follow its position', async () => {
    const stack = await start({ tools: false, gateway: { sseHeartbeatMs: 60_000 } });
    const sessionId = await rawInitialize(stack.url);
    const tasks = sessionTasks(stack, sessionId);
    const task = await tasks.create();
    const reader = await open(stack, sessionId);
    await reader.until(1, 'the priming event');
    await sleepMs(200);
    const feedReads = async (): Promise<number> => {
      const line = (await stack.redis.info('commandstats')).split('\n').find((l) => l.startsWith('cmdstat_xrange:'));
      return Number(/calls=(\d+)/.exec(line ?? '')?.[1] ?? 0);
    };
    const before = await feedReads();
    for (let i = 1; i <= 5; i++) {
      await tasks.status(task, `step ${i}`);
      await reader.until(i + 1, `status notification ${i}`);
    }
    expect(await feedReads()).toBe(before);
    // An entry the stream was not told of (as after a missed message): the next announcement does not follow
    // the stream's position, so the stream reads the feed from there and sends both, in feed order.
    const feedKey = stack.keys.sessionFeed(sessionId);
    const [[, [, last = '']] = ['', []]] = await stack.redis.xrevrange(feedKey, '+', '-', 'COUNT', 1);
    await stack.redis.xadd(feedKey, '*', 's', JSON.stringify({ ...JSON.parse(last), statusMessage: 'unannounced' }));
    await tasks.status(task, 'step 6');
    await reader.until(8, 'the last two notifications');
    expect((reader.messages() as Message[]).map(described).slice(5)).toEqual(['status unannounced', 'status step 6']);
    expect(await feedReads()).toBeGreaterThan(before);
    const feed = (await stack.redis.xrange(feedKey, '-', '+')).map(([id]) => id);
    expect(reader.events.slice(1).map((event) => event.id?.split('_').at(-1))).toEqual(feed.slice(-7));
  });

  it('[NTF-1] stops a connection still carrying the GET stream once it is resumed elsewhere: no notification on both', async () => {
    const [a, b] = [await start({ tools: false }), await start({ tools: false })];
    const sessionId = await rawInitialize(a.url);
    const tasks = sessionTasks(a, sessionId);
    const task = await tasks.create();
    const stale = await open(a, sessionId);
    await stale.until(1, 'the priming event');
    // The client resumes on B while A's connection still looks open (heartbeats are 15 s apart).
    const resumed = await open(b, sessionId, stale.events[0]?.id);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error('the stale connection did not end at once')), 2000);
    });
    await Promise.race([stale.ended, late]).finally(() => clearTimeout(timer));
    await tasks.status(task, 'after');
    await resumed.until(1, 'the notification');
    await sleepMs(50);
    expect((resumed.messages() as Message[]).map(described)).toEqual(['status after']);
    expect(stale.events).toHaveLength(1);
  });

  it('[NTF-1] keeps a connected GET stream resumable however long it logs nothing, then resumes from the feed', async () => {
    const stack = await start({ tools: false, gateway: { sseHeartbeatMs: 100, eventLogRetentionMs: 500 } });
    const sessionId = await rawInitialize(stack.url);
    const tasks = sessionTasks(stack, sessionId);
    const task = await tasks.create();
    const reader = await open(stack, sessionId);
    await reader.until(1, 'the priming event');
    await tasks.status(task, 'early');
    await reader.until(2, 'a status notification');
    // Far beyond the retention without a logged event: the stream's heartbeats kept its state and log.
    await sleepMs(1500);
    const streamId = (reader.events[0]?.id ?? '').slice(0, 26);
    expect(await stack.redis.exists(stack.keys.sseState(streamId))).toBe(1);
    await reader.kill();
    await tasks.status(task, 'missed');
    const resumed = await open(stack, sessionId, reader.events.at(-1)?.id);
    await resumed.until(1, 'the missed notification');
    expect((resumed.messages() as Message[]).map(described)).toEqual(['status missed']);
    expect(resumed.events[0]?.id?.slice(0, 26)).toBe(streamId);
    expect(Keys.digest(sessionId)).toBe(await stack.redis.hget(stack.keys.sseState(streamId), 'session'));
  });

  it('[NTF-1] relays a burst of status changes from their announcements: each once, in feed order, the feed not read', async () => {
    const stack = await start({ tools: false });
    const sessionId = await rawInitialize(stack.url);
    const tasks = sessionTasks(stack, sessionId);
    const refs = await Promise.all(Array.from({ length: 8 }, () => tasks.create()));
    const reader = await open(stack, sessionId);
    await reader.until(1, 'the priming event');
    // The stream's first read of the feed (what came before its subscription) is over.
    await sleepMs(200);
    const feedKey = stack.keys.sessionFeed(sessionId);
    const monitor = await redis.connect().monitor();
    const feedReads: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0] === 'xrange' && args[1] === feedKey) feedReads.push(args.join(' '));
    });
    await sleepMs(50);
    // Sent together on one connection: Redis runs them in this order, and the gateway's subscriber reads
    // their announcements in a few reads, many at a time.
    const messages = Array.from({ length: 40 }, (_, i) => `s${i}`);
    await Promise.all(messages.map((message, i) => tasks.status(refs[i % refs.length] as TaskRef, message)));
    await reader.until(41, 'the 40 status notifications');
    await sleepMs(100);
    monitor.disconnect();
    expect((reader.messages() as Message[]).map(described)).toEqual(messages.map((message) => `status ${message}`));
    const ids = reader.events.map((event) => event.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(feedReads).toEqual([]);
  });
});
