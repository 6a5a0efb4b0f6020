/** Where a command writes: injected so tests can capture output. */
export interface CliIO {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

export const processIO: CliIO = { stdout: process.stdout, stderr: process.stderr };
