/** The directory of the built console (index.html and its assets), which the gateway's admin listener serves. */
export declare const consoleDir: string;
