/** Raw HTTP/1.1 over a socket, for edge tests that send what no HTTP client would. */
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  head: string;
  body: string;
  text: string;
}

/** Reads one HTTP answer from a socket (until its length is in, the connection closes, or the bound). */
export function readAnswer(socket: Socket, boundMs = 20_000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    let text = '';
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      const split = text.indexOf('\r\n\r\n');
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0),
        head: split === -1 ? text : text.slice(0, split),
        body: split === -1 ? '' : text.slice(split + 4),
        text,
      });
    };
    const timer = setTimeout(done, boundMs);
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text.slice(0, split))?.[1];
      if (split !== -1 && length !== undefined && text.length >= split + 4 + Number(length)) done();
    });
    socket.on('close', done);
    socket.on('error', done);
  });
}

/** Sends raw bytes on a new connection to `port` on loopback and reads one answer. */
export async function rawRequest(port: number, request: string | Buffer): Promise<RawAnswer> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  const answer = readAnswer(socket);
  socket.write(request);
  return answer;
}
