import { clientTools } from './client-tools.js';
import { contentTools } from './content-tools.js';
import { inputTools } from './input-tools.js';
import { taskTools } from './task-tools.js';

export { prompts } from './prompts.js';
export { resources } from './resources.js';

/**
 * The fixture the MCP conformance suite's server scenarios expect, as a taskgate worker module:
 * `taskgate worker --tools @taskgate/conformance-fixture` serves its tools, resources and prompts.
 */
export const tools = [...contentTools, ...clientTools, ...taskTools, ...inputTools];
