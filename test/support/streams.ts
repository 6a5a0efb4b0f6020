/** Reading streamed HTTP bodies (fetch's ReadableStream) in tests. */

/**
 * Reads a streamed body until `enough` says so or it ends; returns the text so far (`text` is
 * what was read before) and whether the body ended. Bounded by the calling test's timeout.
 */
export async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  enough: (text: string) => boolean,
  text = '',
): Promise<{ text: string; done: boolean }> {
  const decoder = new TextDecoder();
  while (!enough(text)) {
    const { value, done } = await reader.read();
    if (done) return { text, done: true };
    text += decoder.decode(value, { stream: true });
  }
  return { text, done: false };
}
