/**
 * A tool result rendered as the MCP content it is, and nothing more: text as text, images and
 * audio only from the base64 data the result carries (as data: URLs of a checked media type),
 * resource links and embedded resources as inert text (never a link, never fetched).
 */
import type { ContentItem, ToolCallResult } from '../shared.js';
import { el } from './dom.js';

const IMAGE_TYPES = /^image\/(png|jpeg|gif|webp)$/;
const AUDIO_TYPES = /^audio\/(wav|x-wav|mpeg|mp3|ogg|webm|flac|aac)$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export function renderResult(result: ToolCallResult): HTMLElement {
  return el(
    'div',
    { class: result.isError ? 'result error' : 'result', role: 'region', 'aria-label': 'Tool result' },
    result.isError ? el('p', { class: 'problem' }, 'The tool reported an error:') : null,
    ...(result.content.length === 0 ? [el('p', {}, '(no content)')] : result.content.map(renderItem)),
  );
}

function renderItem(item: ContentItem): HTMLElement {
  if (item.type === 'text' && 'text' in item) return el('pre', { class: 'text' }, String(item.text));
  if ((item.type === 'image' || item.type === 'audio') && 'data' in item) return media(item);
  if (item.type === 'resource_link' && 'uri' in item)
    return el(
      'p',
      { class: 'inert' },
      `Resource link: ${String(item.uri)}${item.name ? ` (${String(item.name)})` : ''}`,
    );
  if (item.type === 'resource' && 'resource' in item) {
    const { uri, text, mimeType } = item.resource;
    return el(
      'div',
      { class: 'inert' },
      el('p', {}, `Resource: ${String(uri)}${mimeType ? ` (${String(mimeType)})` : ''}`),
      typeof text === 'string'
        ? el('pre', { class: 'text' }, text)
        : el('p', {}, '(binary content not shown)'),
    );
  }
  return el('p', { class: 'inert' }, `Content of type "${String(item.type)}" (not shown)`);
}

function media(item: { type: 'image' | 'audio'; data: string; mimeType: string }): HTMLElement {
  const mime = String(item.mimeType).toLowerCase();
  const data = String(item.data);
  const allowed = item.type === 'image' ? IMAGE_TYPES : AUDIO_TYPES;
  if (!allowed.test(mime) || !BASE64.test(data))
    return el(
      'p',
      { class: 'inert' },
      `${item.type} of type "${mime}" not shown (not a supported type or not base64)`,
    );
  const source = `data:${mime};base64,${data}`;
  if (item.type === 'image') {
    const img = el('img', { class: 'image' });
    img.alt = `Image from the tool (${mime})`;
    img.src = source;
    return img;
  }
  const audio = el('audio', { 'aria-label': `Audio from the tool (${mime})` });
  audio.controls = true;
  audio.src = source;
  return audio;
}
