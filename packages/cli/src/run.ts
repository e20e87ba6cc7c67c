/** Entry point of the `taskgate` process (bin/taskgate.js runs its build; tests fork it from sources). */
import { main } from './main.js';

process.exitCode = await main(process.argv.slice(2));
