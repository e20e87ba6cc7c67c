/** Entry point of the `taskgate` process (bin/taskgate.js runs its build; tests fork it from sources). */
import { main } from './main.js';

/**
 * How long the process may stay after its command returned. A command has closed what it owns by then; a
 * handle left open (a client still reconnecting to a Redis that is gone) must not keep it alive.
 */
const EXIT_AFTER_MS = 2000;

const code = await main(process.argv.slice(2));
process.exitCode = code;
setTimeout(() => process.exit(code), EXIT_AFTER_MS).unref();
