/** Where a command writes: injected so tests can capture output. */
export interface CliIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export const processIO: CliIO = { stdout: process.stdout, stderr: process.stderr };
