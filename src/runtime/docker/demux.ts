/**
 * Splits the Engine API's multiplexed stream (non-TTY attach and logs) into stdout and stderr.
 * Each frame is an 8-byte header (stream type, 3 zero bytes, big-endian payload length) and
 * the payload. Both outputs end when the source ends, so readers see EOF.
 */
import { PassThrough, type Readable } from 'node:stream';

const HEADER = 8;
const STDERR = 2;

export interface Demuxed {
  stdout: PassThrough;
  stderr: PassThrough;
}

export function demux(source: Readable): Demuxed {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let pending: Buffer = Buffer.alloc(0);

  source.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= HEADER) {
      const size = pending.readUInt32BE(4);
      if (pending.length < HEADER + size) break;
      const target = pending[0] === STDERR ? stderr : stdout;
      // Copy: the payload must not pin (or alias) the shared receive buffer.
      const ok = target.write(Buffer.from(pending.subarray(HEADER, HEADER + size)));
      pending = pending.subarray(HEADER + size);
      if (!ok) {
        source.pause();
        target.once('drain', () => source.resume());
      }
    }
  });
  let finished = false;
  const finish = (): void => {
    if (finished) return;
    finished = true;
    stdout.end();
    stderr.end();
  };
  source.once('end', finish);
  source.once('close', finish);
  source.once('error', (err) => {
    stdout.destroy(err);
    stderr.destroy(err);
  });
  return { stdout, stderr };
}

/** Both streams of a multiplexed source as one text stream, in the order frames arrive. */
export function demuxMerged(source: Readable): Readable {
  const merged = new PassThrough();
  const { stdout, stderr } = demux(source);
  let open = 2;
  for (const part of [stdout, stderr]) {
    part.on('data', (chunk: Buffer) => merged.write(chunk));
    part.once('end', () => {
      if (--open === 0) merged.end();
    });
    part.once('error', (err) => merged.destroy(err));
  }
  merged.once('close', () => source.destroy());
  return merged;
}
