import { describe, expect, it } from 'vitest';
import { queryTerms, stem, terms, ToolIndex, words, type ToolDocument } from './bm25.js';

const TOOLS: ToolDocument[] = [
  {
    name: 'read_text_file',
    description: 'Read the complete contents of a file from the file system as text.',
    arguments: { path: { description: 'Path of the file' }, head: {}, tail: {} },
  },
  {
    name: 'writeFile',
    description: 'Create a new file or completely overwrite an existing file with new content.',
    arguments: { path: {}, content: {} },
  },
  {
    name: 'list-directory',
    title: 'List directory',
    description: 'Get a detailed listing of all files and directories in a specified path.',
    arguments: { path: {} },
  },
  {
    name: 'get_current_time',
    description: 'Get current time in a specific timezone.',
    arguments: { timezone: { description: "IANA timezone name (e.g. 'Europe/London')" } },
  },
  {
    name: 'fetch',
    description: 'Fetches a URL from the internet and extracts its contents as markdown.',
    arguments: { url: {} },
  },
];

describe('words and terms', () => {
  it('splits identifiers on _ - . and camelCase', () => {
    expect(words('get_fileInfo-v2.x')).toEqual(['get', 'file', 'info', 'v2', 'x']);
    expect(words('HTTPServerURL')).toEqual(['http', 'server', 'url']);
  });

  it('stems plurals and -ing/-ed, drops stop words', () => {
    expect(stem('files')).toBe('file');
    expect(stem('directories')).toBe('directory');
    expect(stem('reading')).toBe('read');
    expect(stem('running')).toBe('run');
    expect(stem('matches')).toBe('match');
    expect(stem('status')).toBe('status');
    expect(terms('What is the time in the directories?')).toEqual(['time', 'directory']);
    expect(new Set(['stage', 'staged', 'staging', 'stages'].map(stem))).toEqual(new Set(['stag']));
  });
});

describe('queryTerms', () => {
  it("weighs the query's own words 1 and their thesaurus neighbours less", () => {
    const weights = queryTerms('open my folder');
    expect(weights.get('folder')).toBe(1);
    expect(weights.get('directory')).toBeGreaterThan(0);
    expect(weights.get('directory')).toBeLessThan(1);
    expect(queryTerms('open my folder', false)).toEqual(
      new Map([
        ['open', 1],
        ['folder', 1],
      ]),
    );
  });

  it('reads URLs and file names for what they are, not for their words', () => {
    const url = queryTerms('summarize https://news.example.org/story/42');
    expect(url.get('url')).toBe(1);
    expect(url.has('news')).toBe(false);
    expect(queryTerms('show notes.txt').get('file')).toBe(1);
    expect(queryTerms('look at logo.png').get(stem('image'))).toBeGreaterThan(0);
    expect(queryTerms('version 1.2').has('file')).toBe(false);
  });
});

describe('ToolIndex', () => {
  const index = new ToolIndex(TOOLS);

  it.each([
    ['read what is in this file', 'read_text_file'],
    ['create a new file', 'writeFile'],
    ['which files are in a folder directory', 'list-directory'],
    ['what time is it in Tokyo timezone', 'get_current_time'],
    ['download the page at this url', 'fetch'],
  ])('%s → %s first', (query, expected) => {
    expect(index.search(query, 3)[0]?.name).toBe(expected);
  });

  it('finds through the thesaurus what shares no word with the query', () => {
    expect(index.search('what is in this folder', 1)[0]?.name).toBe('list-directory');
    expect(index.search('what is in this folder', 1, { expand: false })).toEqual([]);
  });

  it('matches argument names', () => {
    expect(index.search('timezone', 1)[0]?.name).toBe('get_current_time');
  });

  it('leaves out tools sharing no term, and honours the limit', () => {
    expect(index.search('zzz unrelated', 5)).toEqual([]);
    expect(index.search('file', 2)).toHaveLength(2);
    expect(index.search('file', 0)).toEqual([]);
  });

  it('is deterministic, ties broken by name', () => {
    const twins = new ToolIndex([
      { name: 'b_tool', description: 'same words here' },
      { name: 'a_tool', description: 'same words here' },
    ]);
    expect(twins.search('words', 5).map((r) => r.name)).toEqual(['a_tool', 'b_tool']);
    expect(index.search('file path', 5)).toEqual(new ToolIndex(TOOLS).search('file path', 5));
  });

  it('handles an empty listing', () => {
    expect(new ToolIndex([]).search('anything', 5)).toEqual([]);
  });
});
