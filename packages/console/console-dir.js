import { fileURLToPath } from 'node:url';

/** The directory of the built console (index.html and its assets), which the gateway's admin listener serves. */
export const consoleDir = fileURLToPath(new URL('./dist/', import.meta.url));
