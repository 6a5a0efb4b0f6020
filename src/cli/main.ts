#!/usr/bin/env node
/** Entry point of the `moat` command. */
import { runCli } from './program.js';

process.exitCode = await runCli(process.argv.slice(2));
