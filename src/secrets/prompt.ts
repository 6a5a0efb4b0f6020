/** A password prompt that does not echo what is typed (terminal only). */
import type { ReadStream } from 'node:tty';

export function isInteractive(input: NodeJS.ReadableStream = process.stdin): input is ReadStream {
  return Boolean((input as ReadStream).isTTY);
}

export function promptHidden(
  question: string,
  input: ReadStream = process.stdin,
  output: NodeJS.WritableStream = process.stderr,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let value = '';
    const wasRaw = input.isRaw;
    const finish = (err?: Error): void => {
      input.off('data', onData);
      input.setRawMode(wasRaw);
      input.pause();
      output.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: Buffer): void => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n' || char === '\u0004') return finish();
        if (char === '\u0003') return finish(new Error('cancelled'));
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else value += char;
      }
    };
    output.write(question);
    input.setRawMode(true);
    input.resume();
    input.on('data', onData);
  });
}
