// The bench's logger: where a migration sends console.warn.
export const logger: { warn: (...args: unknown[]) => void } = {
  warn: (...args: unknown[]): void => console.warn(...args),
}
