/**
 * The Node.js version check of the `moat` entry point. Imported before anything else, so it must
 * load on old Node versions too: plain code, no imports.
 */
export const MIN_NODE_MAJOR = 22;

/** Why this Node.js cannot run moat, or undefined when it can. */
export function nodeVersionProblem(version: string): string | undefined {
  const major = Number(version.split('.')[0]);
  if (major >= MIN_NODE_MAJOR) return undefined;
  return (
    `moat needs Node.js ${MIN_NODE_MAJOR} or newer, and this is Node.js ${version}; ` +
    `install Node.js ${MIN_NODE_MAJOR}+ (https://nodejs.org/en/download, or \`nvm install ${MIN_NODE_MAJOR}\`) and run moat with it`
  );
}
