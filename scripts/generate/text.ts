/**
 * Text helpers of the generators: marked regions of a page, word wrapping, table rows.
 *
 * A generated region of a Markdown page sits between two HTML comments (invisible when the page
 * is rendered):
 *
 *   <!-- generated: <id> by `npm run generate` from <source>: edit that, not this -->
 *   ...
 *   <!-- end generated: <id> -->
 *
 * Everything outside the markers is the page's own prose and stays as written.
 */

const escaped = (id: string): string => id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const START = (id: string): RegExp => new RegExp(`^<!-- generated: ${escaped(id)} by \`npm run generate\` from [^\\n]*-->\\n`, 'm');
const end = (id: string): string => `<!-- end generated: ${id} -->`;

/** The opening marker of region `id`, naming the source to edit. */
export function regionStart(id: string, source: string): string {
  return `<!-- generated: ${id} by \`npm run generate\` from ${source}: edit that, not this -->`;
}

/** The text of region `id` in `page` (between its markers), or throws naming the page. */
export function regionBody(page: string, id: string, pageName: string): string {
  const start = START(id).exec(page);
  const stop = page.indexOf(end(id));
  if (start === null || stop < start.index) throw new Error(`${pageName} has no region "${id}" (the markers of scripts/generate/text.ts)`);
  return page.slice(start.index + start[0].length, stop);
}

/** `page` with region `id` holding `body` (and its opening marker naming `source`). */
export function withRegion(page: string, id: string, source: string, body: string, pageName: string): string {
  regionBody(page, id, pageName);
  const start = START(id).exec(page)!;
  const stop = page.indexOf(end(id));
  const text = body.endsWith('\n') ? body : `${body}\n`;
  return `${page.slice(0, start.index)}${regionStart(id, source)}\n${text}${page.slice(stop)}`;
}

/** `text` broken into lines of at most `width` characters (a longer word stays whole). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}

/**
 * A Markdown table: a header row, its separator and one row per item. A `|` in a cell is escaped,
 * unless `escape` is false (cells that are Markdown already, kept from a page).
 */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[], align: readonly ('left' | 'right')[] = [], escape = true): string {
  const cell = (c: string): string => (escape ? c.replaceAll('|', '\\|') : c);
  const line = (cells: readonly string[]): string => `| ${cells.map(cell).join(' | ')} |`;
  const separator = `|${header.map((_, i) => (align[i] === 'right' ? '---:' : '---')).join('|')}|`;
  return [line(header), separator, ...rows.map(line)].join('\n');
}
