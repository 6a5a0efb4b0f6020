/** Optional RunConfig fields: set a key only when it has a value, so unset flags leave no trace. */

export function defined<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

export function nonEmpty<K extends string, V>(key: K, values: V[]): { [P in K]?: V[] } {
  return defined(key, values.length > 0 ? values : undefined);
}

export function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
