/** A password prompt that does not echo what is typed (terminal only). */
import type { ReadStream } from 'node:tty';

export function isInteractive(input: NodeJS.ReadableStream = process.stdin): input is ReadStream {
  return Boolean((input as ReadStream).isTTY);
}

/** Typed-ahead input after an answered prompt (pasted lines arrive in one chunk), for the next prompt. */
let typedAhead = '';

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
    /** Reads characters until Enter; keeps what follows for the next prompt. */
    const consume = (text: string): void => {
      const chars = [...text];
      for (let i = 0; i < chars.length; i++) {
        const char = chars[i] as string;
        if (char === '\r' || char === '\n' || char === '\u0004') {
          typedAhead = chars.slice(i + (char === '\r' && chars[i + 1] === '\n' ? 2 : 1)).join('');
          return finish();
        }
        if (char === '\u0003') return finish(new Error('cancelled'));
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else value += char;
      }
    };
    const onData = (chunk: Buffer): void => consume(chunk.toString('utf8'));
    // Raw mode (no echo) before the question shows, so nothing typed after it is ever echoed.
    input.setRawMode(true);
    input.on('data', onData);
    input.resume();
    output.write(question);
    const ahead = typedAhead;
    typedAhead = '';
    if (ahead) consume(ahead);
  });
}
