import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Every Markdown page of the docs site (docs/**, without VitePress's own folder). */
function docsPages(dir = join(root, 'docs'), found: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === '.vitepress' || name === 'node_modules') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) docsPages(path, found);
    else if (name.endsWith('.md')) found.push(relative(root, path));
  }
  return found;
}

const lines = (file: string): number => readFileSync(join(root, file), 'utf8').split('\n').length - 1;

/**
 * Paragraphs of a page: blocks of prose between blank lines, and each item of a list, outside code, tables,
 * headings and HTML.
 */
function paragraphs(text: string): string[] {
  const withoutCode = text.replace(/^```[\s\S]*?^```/gm, '');
  return withoutCode
    .split(/\n\s*\n/)
    .flatMap((block) => block.trim().split(/\n(?=- |\d+\. )/))
    .map((block) => block.trim())
    .filter((block) => block !== '' && !/^(#|\||<|:::|!\[)/.test(block));
}

/** Sentences of a paragraph: a full stop, question or exclamation mark before a space and a capital or a backtick. */
const sentences = (paragraph: string): number =>
  paragraph.replace(/`[^`]*`/g, 'x').split(/(?<=[.!?])\s+(?=[A-Z`(*])/).length;

describe('the docs are short pages', () => {
  it('README.md has at most 200 lines', () => {
    expect(lines('README.md')).toBeLessThanOrEqual(200);
  });

  it('no page of docs/ has more than 250 lines', () => {
    const pages = docsPages();
    expect(pages.length).toBeGreaterThan(25);
    const long = pages.filter((page) => lines(page) > 250).map((page) => `${page}: ${lines(page)} lines`);
    expect(long).toEqual([]);
  });

  it('counts sentences as the guide rule means them', () => {
    expect(sentences('One. Two `a. B` here. Three?')).toBe(3);
    expect(sentences('Use e.g. this one. Two. Three. Four!')).toBe(4);
    expect(paragraphs('# T\n\nA. B.\n\n- one. Two.\n- three\n\n```\nx. Y. Z. W.\n```\n')).toEqual([
      'A. B.',
      '- one. Two.',
      '- three',
    ]);
  });

  it('guide paragraphs hold at most three sentences', () => {
    const long: string[] = [];
    for (const page of docsPages(join(root, 'docs', 'guide'))) {
      for (const paragraph of paragraphs(readFileSync(join(root, page), 'utf8'))) {
        if (sentences(paragraph) > 3) long.push(`${page}: ${paragraph.slice(0, 80)}…`);
      }
    }
    expect(long).toEqual([]);
  });
});

describe('the files a newcomer looks for', () => {
  it('LICENSE (Apache-2.0), CONTRIBUTING.md, CHANGELOG.md and SECURITY.md exist', () => {
    expect(readFileSync(join(root, 'LICENSE'), 'utf8')).toContain(
      'Apache License\n                           Version 2.0',
    );
    for (const file of ['CONTRIBUTING.md', 'CHANGELOG.md', 'SECURITY.md'])
      expect(existsSync(join(root, file)), file).toBe(true);
  });

  it('every published package has a README with an install command, an example and a docs link', () => {
    for (const name of readdirSync(join(root, 'packages'))) {
      const manifest = JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8')) as {
        private?: boolean;
      };
      if (manifest.private === true) continue;
      const readme = join(root, 'packages', name, 'README.md');
      expect(existsSync(readme), readme).toBe(true);
      const text = readFileSync(readme, 'utf8');
      expect(text, readme).toMatch(/## Install\n[\s\S]*npm install/);
      expect(text, readme).toContain('## Example');
      expect(text, readme).toMatch(/## Docs\n[\s\S]*docs\//);
    }
  });
});
