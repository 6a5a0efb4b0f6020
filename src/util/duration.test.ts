import { describe, expect, it } from 'vitest';
import { formatDuration, formatDurationShort, parseDuration } from './duration.js';

describe('parseDuration', () => {
  it.each([
    ['30s', 30_000],
    ['1m', 60_000],
    ['2m30s', 150_000],
    ['1h0m0s', 3_600_000],
    ['250ms', 250],
    ['1.5s', 1500],
    ['0', 0],
    ['0s', 0],
  ])('%s → %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['', 'abc', '30', '10x', '1m 30s', '-5s', 's'])('rejects %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe('formatDuration', () => {
  it.each([
    [7_200_000, '2h0m0s'],
    [90_000, '1m30s'],
    [30_000, '30s'],
    [500, '500ms'],
    [0, '0s'],
  ])('%d ms → %s', (ms, text) => expect(formatDuration(ms)).toBe(text));
});

describe('formatDurationShort', () => {
  it.each([
    [7_200_000, '2h'],
    [5_400_000, '1h30m'],
    [3_630_000, '1h0m30s'],
    [60_000, '1m'],
    [30_000, '30s'],
    [500, '500ms'],
    [0, '0s'],
  ])('%d ms → %s', (ms, text) => {
    expect(formatDurationShort(ms)).toBe(text);
    expect(parseDuration(text)).toBe(ms);
  });
});
