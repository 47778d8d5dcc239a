/**
 * Reads the members of an exported interface from a source file with the TypeScript compiler API:
 * name, written type and doc comment. The docs tests use it to check docs/configuration.md and
 * docs/events.md against the option and event types users see.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface InterfaceMember {
  name: string;
  /** The type as written in the source (for an event map: the tuple of listener arguments). */
  type: string;
  optional: boolean;
  /** The doc comment's text, '' when none. */
  doc: string;
}

/** The members declared by `interfaceName` in `file` (relative to the repository root), in order. */
export function interfaceMembers(file: string, interfaceName: string): InterfaceMember[] {
  const text = readFileSync(path.join(repoRoot, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  let found: ts.InterfaceDeclaration | undefined;
  source.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node) && node.name.text === interfaceName) found = node;
  });
  if (!found) throw new Error(`${file} declares no interface ${interfaceName}`);
  return found.members.filter(ts.isPropertySignature).map((m) => ({
    name: m.name.getText(source).replace(/^'|'$/g, ''),
    type: m.type ? m.type.getText(source) : 'unknown',
    optional: m.questionToken !== undefined,
    doc: ts
      .getJSDocCommentsAndTags(m)
      .map((d) => (typeof d.comment === 'string' ? d.comment : ''))
      .join(' ')
      .replace(/\s+/g, ' ')
      .trim(),
  }));
}

/** The rows of the markdown table under the heading `## title` (or `### title`): first cell → cells. */
export function markdownTable(markdown: string, title: string): Map<string, string[]> {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => /^#{2,3} /.test(l) && l.replace(/^#+ /, '').trim() === title);
  if (start < 0) throw new Error(`no section '${title}'`);
  const rows = new Map<string, string[]>();
  for (let i = start + 1; i < lines.length && !/^#{2,3} /.test(lines[i] ?? ''); i++) {
    const line = (lines[i] ?? '').trim();
    if (!line.startsWith('|') || /^\|\s*-/.test(line)) continue;
    const cells = line
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((c) => c.trim());
    const key = (cells[0] ?? '').replace(/`/g, '');
    if (key !== '' && !rows.has(key)) rows.set(key, cells);
  }
  return rows;
}
