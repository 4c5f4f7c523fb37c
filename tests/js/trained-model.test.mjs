// The explorer's shipped trained model (web/src/model/trained/words-gpt.safetensors) is what
// scripts/train-explorer-model.mjs trains, bit for bit: the script retrains it (≈ 2–5 s) and compares.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../', import.meta.url));

test('the committed explorer model is reproduced bit for bit by its script', () => {
  const out = execFileSync(process.execPath, [`${repo}scripts/train-explorer-model.mjs`, '--check'], { encoding: 'utf8' });
  assert.match(out, /reproduced bit for bit/);
});
