// Actual Budget's import of the bench CSV, timed (bench/peer.py runs this; issue 19 item 4).
//
//   node actual_import.mjs --csv rows.csv --data-dir DIR --out result.json
//
// Run from a folder where `npm install` put @actual-app/api (bench/peer/package.json pins it).
// Everything is local: a new budget in DIR, no server, no sync. What a user importing this CSV
// file into an account gets: each row becomes date, amount (integer cents), payee_name,
// imported_payee, notes and the category of that name (20 categories made beforehand, as the
// bench household has), with no imported_id (a CSV has none, so a re-import is deduplicated by
// Actual's fuzzy matching: same account and amount within 7 days, payee preferred). The CSV is
// read and converted inside the timed span, as ours parses the file inside its own.
// The app's import dialog also runs the same call once as a preview first; this does not.
// Writes its figures as JSON to --out (Actual logs to stdout as it goes).

import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

import * as api from '@actual-app/api';

function arg(name) {
  const at = process.argv.indexOf(`--${name}`);
  if (at < 0 || at + 1 >= process.argv.length) throw new Error(`--${name} is required`);
  return process.argv[at + 1];
}

// RFC 4180 rows, as Python's csv module writes them (quotes doubled, CRLF line ends).
function csvRows(text) {
  const rows = [];
  let row = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

// "-12.3" -> -1230, exactly (no float arithmetic).
function cents(text) {
  const negative = text.startsWith('-');
  const [whole, frac = ''] = text.replace(/^[-+]/, '').split('.');
  const value = Number(whole) * 100 + Number((frac + '00').slice(0, 2));
  return negative ? -value : value;
}

function transactions(path, accountId, categoryIds) {
  const [header, ...rows] = csvRows(readFileSync(path, 'utf8'));
  const col = Object.fromEntries(header.map((name, i) => [name, i]));
  return rows.map(r => ({
    account: accountId,
    date: r[col.date],
    amount: cents(r[col.amount]),
    payee_name: r[col.name],
    imported_payee: r[col.name],
    notes: r[col.notes] || null,
    category: categoryIds.get(r[col.category]),
    cleared: false,
  }));
}

async function count(accountId) {
  const { data } = await api.aqlQuery(
    api.q('transactions').filter({ account: accountId }).calculate({ $count: '*' }),
  );
  return data;
}

async function timedImport(csvPath, accountId, categoryIds) {
  const start = performance.now();
  const txns = transactions(csvPath, accountId, categoryIds);
  const read = performance.now();
  const result = await api.importTransactions(accountId, txns);
  const end = performance.now();
  if (result.errors?.length) throw new Error(JSON.stringify(result.errors.slice(0, 3)));
  return {
    rows: txns.length,
    seconds: (end - start) / 1000,
    read_seconds: (read - start) / 1000,
    added: result.added.length,
    updated: result.updated.length,
  };
}

async function main() {
  const csvPath = arg('csv');
  const dataDir = arg('data-dir');
  arg('out');
  const { send } = await api.init({ dataDir });
  // A new local budget, opened as the app opens one (not runImport's import mode, which turns
  // syncing off and rebuilds the budget afterwards).
  const created = await send('create-budget', { budgetName: 'bench-peer', avoidUpload: true });
  if (created?.error) throw new Error(`create-budget: ${created.error}`);
  const accountId = await api.createAccount({ name: 'Bench', offbudget: false }, 0);
  const groupId = await api.createCategoryGroup({ name: 'Bench' });
  const categoryIds = new Map();
  for (let i = 0; i < 20; i++) {
    const name = `Category ${i}`;
    categoryIds.set(name, await api.createCategory({ name, group_id: groupId }));
  }
  const version = JSON.parse(
    readFileSync(new URL('./node_modules/@actual-app/api/package.json', import.meta.url)),
  ).version;
  const out = { peer: 'actual', api_version: version, node: process.version };
  const save = () => {
    out.peak_rss_mb = Math.round(process.resourceUsage().maxRSS / 1024);
    writeFileSync(arg('out'), JSON.stringify(out));
  };
  // Written after each phase: a re-import cut short still leaves the import's figure.
  out.import = await timedImport(csvPath, accountId, categoryIds);
  out.import.ledger_rows = await count(accountId);
  save();
  // --import-only: Actual's re-import of 50,000 rows runs for more than an hour.
  if (!process.argv.includes('--import-only')) {
    out.reimport = await timedImport(csvPath, accountId, categoryIds);
    out.reimport.ledger_rows = await count(accountId);
    save();
  }
  await api.shutdown();
}

main().catch(err => {
  console.error(err);
  process.exit(1);
});
