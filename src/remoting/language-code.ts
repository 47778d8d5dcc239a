/**
 * RocketMQ's LanguageCode: which client implementation made a command (one byte in the binary
 * header, the enum name in the JSON one).
 * @pure
 */
/** RocketMQ's LanguageCode: the client implementation that made a command. */
export const LanguageCode = Object.freeze({
  JAVA: 0,
  CPP: 1,
  DOTNET: 2,
  PYTHON: 3,
  DELPHI: 4,
  ERLANG: 5,
  RUBY: 6,
  OTHER: 7,
  HTTP: 8,
  GO: 9,
  PHP: 10,
  OMS: 11,
  RUST: 12,
  NODE_JS: 13,
} as const);
export type LanguageName = keyof typeof LanguageCode;

const LANGUAGE_BY_CODE = new Map<number, LanguageName>(
  Object.entries(LanguageCode).map(([k, v]) => [v, k as LanguageName] as const),
);

/** The language name of a LanguageCode byte, or null for a byte RocketMQ does not know. */
export function languageName(code: number): LanguageName | null {
  return LANGUAGE_BY_CODE.get(code) ?? null;
}
