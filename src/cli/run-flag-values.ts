/**
 * The typed view of parsed `moat run` flags, derived from the flag table: RunFlags (keyed like
 * commander's opts(), one value type per row), the defaults parsing with no flags gives, and
 * lookups by long name.
 */
import type { RunFlagSpec } from './run-flag-spec.js';
import { RUN_FLAGS } from './run-flags.js';

export type RunFlagRow = (typeof RUN_FLAGS)[number];
export type RunFlagName = RunFlagRow['long'];

/** `proxy-read-timeout` → `proxyReadTimeout`, as commander names option values. */
type Camel<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;

type ValueOf<R extends RunFlagRow> = R['type'] extends 'bool'
  ? boolean
  : R['type'] extends 'stringArray' | 'strings'
    ? string[]
    : R['type'] extends 'int' | 'float' | 'duration'
      ? R extends { default: number }
        ? number
        : number | undefined
      : R extends { choices: readonly (infer C)[]; default: string }
        ? C
        : R extends { choices: readonly (infer C)[] }
          ? C | undefined
          : R extends { default: string }
            ? string
            : string | undefined;

/** Parsed flag values, keyed like commander's opts(); durations are milliseconds. */
export type RunFlags = {
  [R in RunFlagRow as R['long'] extends 'help' ? never : Camel<R['long']>]: ValueOf<R>;
};

export function attributeName(long: string): string {
  return long.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}

export function flagRow(long: RunFlagName): RunFlagRow {
  return RUN_FLAGS.find((row) => row.long === long) as RunFlagRow;
}

/** The default values of every flag, as parsing with no flags would give. */
export function defaultRunFlags(): RunFlags {
  const flags: Record<string, unknown> = {};
  for (const row of RUN_FLAGS as readonly RunFlagSpec[]) {
    if (row.long === 'help') continue;
    const isList = row.type === 'stringArray' || row.type === 'strings';
    flags[attributeName(row.long)] = isList ? [] : row.default;
  }
  return flags as RunFlags;
}
