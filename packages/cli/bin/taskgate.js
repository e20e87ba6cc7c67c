#!/usr/bin/env node
// The `taskgate` command. Runs the built CLI; `npm run build` at the repository root builds it.
import '../dist/run.js';
