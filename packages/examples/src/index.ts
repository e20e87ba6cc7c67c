import { askName } from './ask-name.js';
import { crash } from './crash.js';
import { echo } from './echo.js';
import { fail } from './fail.js';
import { report } from './report.js';
import { sleep } from './sleep.js';
import { summarize } from './summarize.js';

export { askName, crash, echo, fail, report, sleep, summarize };

/** Every example tool, as `taskgate worker --tools @taskgate/examples` loads them. */
export const tools = [sleep, report, echo, fail, crash, askName, summarize];
export default tools;
