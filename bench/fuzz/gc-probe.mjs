// Preloaded into the fuzzed gateway (NODE_OPTIONS=--expose-gc --import=<this file>): on the IPC message
// `gc` from its parent it runs two full garbage collections and answers with its heap and resident memory,
// so the fuzz can compare memory after the run with the baseline without anything new in the gateway.
if (typeof process.send === 'function' && typeof globalThis.gc === 'function') {
  const gc = globalThis.gc;
  process.on('message', (message) => {
    if (message !== 'gc') return;
    gc();
    gc();
    const { heapUsed, rss } = process.memoryUsage();
    process.send?.({ heapUsed, rss });
  });
  // The IPC channel must not keep the gateway alive once it shuts down.
  process.channel?.unref();
}
