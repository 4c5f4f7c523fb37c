// The model folder's README.md (a Hugging Face model card), written from the run's record (training.json) and
// head scores (head-scores.json) alone, so that `train-shipped-model.mjs --card` can rewrite it without training.

const n = (x, d = 3) => x.toFixed(d);
const thousands = (x) => x.toLocaleString('en-US');
const mb = (bytes) => `${(bytes / 1e6).toFixed(2)} MB`;

/** @param {{ record: object, heads: object, sizes: Record<string, number> }} */
export function modelCard({ record, heads, sizes }) {
  const { config: c, train: t, corpus, heldOutEvaluation: h, samples } = record;
  const row = (name, r, extra = '') => `| ${name}${extra} | ${n(r.lossPerToken)} | ${n(r.perplexityPerToken, 1)} | ${n(r.natsPerByte)} | ${n(r.bitsPerByte)} | ${n(r.natsPerCharacter)} |`;
  const named = heads.names.filter((x) => x.patterns.length);
  const scoreTable = heads.names.map(({ layer, head, patterns }) =>
    `| ${layer} | ${head} | ${Object.keys(heads.patterns).map((p) => n(heads.patterns[p].scores[layer][head], 2)).join(' | ')} | ${patterns.join(', ') || '—'} |`);
  const curve = record.heldOut.map(([step, loss]) => `${step}: ${n(loss)}`).join(' · ');
  return `---
license: other
language: en
library_name: transformers
pipeline_tag: text-generation
tags: [gpt2, attnlab]
---

# ${record.model}

A small GPT-2 trained by [attnlab](../../../README.md)'s own engine (WebAssembly, ${t.threads} workers) on the King
James Bible and a selection of fortune-cookie files, both installed by Debian packages. It is the model the attnlab
explorer ships, so that every attention view can show a model that has read real English. It is small enough to
read every head, and it writes KJV-flavoured English; it is not a useful assistant.

- Architecture: GPT-2 (transformers' \`GPT2LMHeadModel\`): ${c.layers} layers, ${c.heads} heads of ${c.dModel / c.heads}, d_model ${c.dModel},
  MLP ${4 * c.dModel}, context ${c.context} tokens, learned positions, biases, tied input/output embeddings, exact (erf) GELU
  (\`"activation_function": "gelu"\`), LayerNorm ε 1e-5.
- ${thousands(record.parameters)} parameters, stored as float16 (\`model.safetensors\`, ${mb(sizes['model.safetensors'])}).
- Tokenizer: byte-level BPE in GPT-2's form (GPT-2's pre-tokenizer regex, ${thousands(c.vocabSize)} tokens: 256 bytes, ${thousands(c.vocabSize - 257)}
  merges, \`<|endoftext|>\` = ${c.vocabSize - 1}), trained on the training split by \`scripts/shipped-model/bpe.mjs\`; \`tokenizer.json\`
  loads in Hugging Face's tokenizers and gives the ids the trainer gives (tests/js/shipped-tokenizer.test.mjs).

## Data

| source | Debian package | licence | training | held out |
| --- | --- | --- | --- | --- |
| King James Version of the Bible (1611), every verse (\`bible -f Gen1:1-Rev22:21\`), one document per chapter, one verse per line | bible-kjv ${corpus.versions['bible-kjv-text']} | public domain: "The copyright for the King James Version text of the Bible is expired" (/usr/share/doc/bible-kjv/copyright) | ${thousands(corpus.train.kjv.documents)} chapters, ${thousands(corpus.train.kjv.bytes)} bytes | ${thousands(corpus.heldOut.kjv.documents)} chapters, ${thousands(corpus.heldOut.kjv.bytes)} bytes |
| fortune files ${corpus.fortuneFiles.join(', ')}; one document per fortune | fortunes-min, fortunes ${corpus.versions.fortunes} | BSD licence of the fortune collection (/usr/share/doc/fortunes/copyright); quotations gathered from many authors | ${thousands(corpus.train.fortunes.documents)} fortunes, ${thousands(corpus.train.fortunes.bytes)} bytes | ${thousands(corpus.heldOut.fortunes.documents)} fortunes, ${thousands(corpus.heldOut.fortunes.bytes)} bytes |

Held out (never trained on, nor used to train the tokenizer): every 20th chapter and every 20th fortune of each
file, from the 11th on. ${thousands(corpus.trainTokens)} training tokens, ${thousands(corpus.heldOutTokens)} held-out tokens. The corpus is
extracted by \`scripts/shipped-model/corpus.mjs\` (sha256 ${corpus.sha256}). More on the data and its licences:
docs/shipped-model.md.

## Training

\`node scripts/train-shipped-model.mjs\` (attnlab's \`GPT.trainStepAsync\`, ${t.threads} workers). ${thousands(t.steps)} steps of
${t.batch} × ${c.context} tokens at seeded offsets (${n((t.steps * t.batch * c.context) / corpus.trainTokens, 1)} passes over the training tokens); AdamW (β ${t.beta1}, ${t.beta2},
ε ${t.eps}, weight decay ${t.weightDecay} on matrices and embeddings), gradient clipped to norm ${t.gradClip}, learning rate
warmed up linearly over ${t.warmup} steps to ${t.lr}, then a cosine to ${t.minLr}. Initial weights: nanoGPT's scheme, seed ${c.seed}.
The run took ${n(record.seconds / 60, 1)} min (${thousands(Math.round(record.cpuSeconds))} cpu-s) on ${record.loadAverage.cores} cores shared with other work (load average
${n(record.loadAverage.meanDuringRun, 1)} on average during the run${record.loadAverage.niceness ? `, the run at niceness ${record.loadAverage.niceness}` : ''}). Bit for bit reproducible: the same seeds and
number of workers give the same float32 sums on every machine; \`--check\` (run by \`npm test\`) retrains the first steps
and compares them with \`training.json\`, \`--verify\` retrains everything and compares the whole folder.

Held-out loss during training (nats per token, ${record.heldOut.length ? 'on 16 windows' : ''}): ${curve}.

## Held-out numbers

Measured on the shipped float16 weights over all ${thousands(corpus.heldOutTokens)} held-out tokens (windows of ${c.context} that advance by ${c.context / 2}, so
every token is predicted from at least ${c.context / 2} tokens of context where the text has them). The baselines use the
same tokens, fit on the training split; the bigram's add-k smoothing (k = ${h.bigram.k}) was chosen on the training split alone
(its first 90% of documents fit, the last 10% scored). Per byte: the loss divided by the held-out text's UTF-8 bytes
(one byte counted per document separator), comparable across tokenizers.

| model | nats / token | perplexity / token | nats / byte | bits / byte | nats / character |
| --- | --- | --- | --- | --- | --- |
${row(record.model, h.model)}
${row('bigram', h.bigram, `, add-${h.bigram.k}`)}
${row('unigram', h.unigram, ', add-1')}

Rounding the weights to float16 moved the check windows' loss from ${n(record.float32WindowLoss, 5)} to ${n(record.shippedWindowLoss, 5)}.

## Samples

\`GPT.generate\` on the shipped weights, temperature ${samples.temperature}, top-k ${samples.topK}, ${samples.maxTokens} tokens, seeds ${samples.seed}… (one per prompt):

${samples.texts.map((s) => `\`${s.prompt}\` →\n\n\`\`\`text\n${s.prompt}${s.continuation}\n\`\`\``).join('\n\n')}

## Heads

Scores (\`head-scores.json\`): the mean share of a query's attention that goes where a pattern says, from the engine's
attention weights on ${heads.measuredOn.heldOutWindows} held-out windows of ${heads.measuredOn.windowTokens} tokens (induction: ${heads.measuredOn.inductionSequences} random sequences of ${heads.measuredOn.windowTokens / 2} tokens shown
twice). Previous token: the key just before the query. First token: the window's first key (where heads park
attention). Same word: earlier tokens of the query's own word. Duplicate token: earlier copies of the query's token.
Induction: the token after the query's earlier occurrence. Chance levels (uniform causal attention over the same
queries): ${Object.entries(heads.patterns).map(([p, v]) => `${p} ${n(v.chance, 3)}`).join(', ')}.
${heads.rule[0].toUpperCase()}${heads.rule.slice(1)}. ${named.length} of ${heads.names.length} heads ${named.length === 1 ? 'is' : 'are'} named.

| layer | head | ${Object.keys(heads.patterns).join(' | ')} | name |
| --- | --- | ${Object.keys(heads.patterns).map(() => '---').join(' | ')} | --- |
${scoreTable.join('\n')}

## Files

${Object.entries(sizes).map(([f, s]) => `- \`${f}\`: ${thousands(s)} bytes`).join('\n')}
- \`README.md\`: this card; \`training.json\`: the run's record (recipe, every batch loss, weight hashes, the files' sha256).

## Limitations

Trained on ${thousands(corpus.trainTokens)} tokens, mostly the King James Bible: it writes archaic, scriptural English and knows little
else. The Bible repeats itself (Kings and Chronicles, Psalms 14 and 53), so some held-out verses have near copies in
the training split. The fortune files gather quotations from many authors under the collection's BSD licence; their
individual copyright is not recorded.
`;
}
