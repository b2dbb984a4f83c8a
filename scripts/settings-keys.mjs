#!/usr/bin/env node
// Lists every settings key of Gemini CLI 0.61 from its own bundle (the
// settings schema it validates settings.json against), one dotted key a line.
// Objects with `properties` are walked; anything else (a value, a map such
// as `mcpServers`, a list) is a key. The list is committed as
// crates/settings/src/keys_061.txt; a test checks the README's table names
// every key in it, so re-run this when moving to a newer Gemini CLI:
//
//   node scripts/settings-keys.mjs [bundle-dir] > crates/settings/src/keys_061.txt
//   node scripts/settings-keys.mjs --check      # exit 1 if the committed list differs
//   node scripts/settings-keys.mjs --tsv        # key, type, default, description
//
// The bundle dir defaults to $GEMINI_CLI_BUNDLE or the peer-bench install.
import { readdirSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const check = args.includes('--check');
const tsv = args.includes('--tsv');
const dirArg = args.find((a) => !a.startsWith('--'));
const bundle =
  dirArg ??
  process.env.GEMINI_CLI_BUNDLE ??
  '/root/.cache/peer-bench/gemini-cli-0.61.0/node_modules/@google/gemini-cli/bundle';

// The schema lives in a content-hashed chunk: find the one exporting it.
const chunk = readdirSync(bundle)
  .filter((f) => f.endsWith('.js'))
  .sort()
  .find((f) => /^\s+getSettingsSchema,$/m.test(readFileSync(join(bundle, f), 'utf8')));
if (!chunk) {
  console.error(`no chunk exporting getSettingsSchema in ${bundle}`);
  process.exit(2);
}
// Importing the chunk runs its module code, which logs noise on stderr and
// stdout: keep our output aside until the import is done.
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = () => true;
const { getSettingsSchema } = await import(pathToFileURL(join(bundle, chunk)).href);
const schema = getSettingsSchema();
process.stdout.write = write;

const rows = [];
const walk = (props, prefix) => {
  for (const [name, def] of Object.entries(props)) {
    const key = prefix ? `${prefix}.${name}` : name;
    if (def.type === 'object' && def.properties) {
      walk(def.properties, key);
    } else {
      const value = def.default === undefined ? '' : JSON.stringify(def.default);
      const shortValue = value.length > 60 ? `${value.slice(0, 57)}...` : value;
      const description = (def.description ?? '').replace(/\s+/g, ' ').trim();
      rows.push([key, def.type, shortValue, description]);
    }
  }
};
walk(schema, '');

if (tsv) {
  for (const row of rows) console.log(row.join('\t'));
} else if (check) {
  const here = dirname(fileURLToPath(import.meta.url));
  const committed = readFileSync(join(here, '../crates/settings/src/keys_061.txt'), 'utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('#'));
  const now = rows.map((r) => r[0]);
  const missing = now.filter((k) => !committed.includes(k));
  const extra = committed.filter((k) => !now.includes(k));
  for (const k of missing) console.log(`not in keys_061.txt: ${k}`);
  for (const k of extra) console.log(`no longer in the schema: ${k}`);
  process.exit(missing.length || extra.length ? 1 : 0);
} else {
  console.log('# Gemini CLI 0.61 settings keys (scripts/settings-keys.mjs); one a line.');
  for (const row of rows) console.log(row[0]);
}
