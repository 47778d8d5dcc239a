export function worktreeStatus(dir: string): string[] | null;
export function newEntries(before: readonly string[], after: readonly string[]): string[];
export function assertWorktreeUnchanged(dir: string, before: readonly string[] | null): void;
