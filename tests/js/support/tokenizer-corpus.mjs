// The strings the tokenizer tests encode with every real tokenizer file and compare with Hugging Face's own
// tokenizers: Unicode (accents and combining marks in NFC and NFD, emoji with ZWJ sequences, skin tones, flags,
// keycaps), scripts (CJK, Arabic, Hebrew, Devanagari, Thai, Cyrillic, Greek), white space of every kind, numbers,
// code, contractions in both cases, the special tokens' text inside ordinary text, the empty string, and long
// texts: the King James Bible (fixtures/tokenizer/kjv.txt, public domain) and the fortunes of the Debian package
// `fortunes` (read from the system: scripts/bootstrap.sh installs it).
import { readFileSync } from 'node:fs';

const fixture = (name) => readFileSync(new URL(`../fixtures/tokenizer/${name}`, import.meta.url), 'utf8');

const vietnamese = 'Tiếng Việt có dấu: Hà Nội, Đà Nẵng, Huế — ở đâu cũng đẹp.';
const accents = 'café naïve résumé façade Ångström Øre Œuvre Müller Ñandú Łódź Český Ærø';

export const corpus = [
  '', ' ', '  ', '\t', '\n', '\r\n', 'a', 'Hello world', ' Hello world ', '   leading and trailing   ', 'Hello, World!',
  // accents, NFC and NFD
  accents, accents.normalize('NFD'), vietnamese, vietnamese.normalize('NFD'),
  'e\u0301 e\u0301\u0323 e\u0323\u0301 a\u0300\u0316 \u1e9b\u0323 q\u0307\u0323 \u0041\u030a \u212b', 'ḁ̈ ǭ ǖ ṩ ḝ',
  'İstanbul ıi Straße STRASSE ß ẞ ﬁ ﬂ ﬀ ǅ ǈ',
  // emoji
  '😀', '👍🏽', 'I ❤️ 🍕! 🎉🎉🎉', '👨‍👩‍👧‍👦 family, 🏳️‍🌈 flag, 🧑🏿‍💻 coder', '🇺🇸🇯🇵🇩🇪🇧🇷 flags', '1️⃣ 2️⃣ #️⃣ *️⃣', '✅ ✔ ☑ ⚠️ ♻️',
  // scripts
  '你好，世界！这是一个测试。', '日本語のテキストとカタカナ、ひらがな。東京タワー', '한국어 텍스트입니다. 안녕하세요!', '漢字 かな カナ 한글',
  'مرحبا بالعالم! كيف حالك؟', 'שלום עולם, מה שלומך?', 'नमस्ते दुनिया, आप कैसे हैं?', 'สวัสดีชาวโลก ภาษาไทย',
  'Привет, мир! Съешь же ещё этих мягких французских булок.', 'Γειά σου Κόσμε· ΑΒΓ αβγ ς σ', 'Hello世界مرحباשלום',
  // white space
  'a    b', 'a\t\tb', 'a\n\n\nb', 'a \n b', 'line1\r\nline2\r\n', '   \n\n   x', 'x\n\n\n', '\n\n\n', ' \t \n \r\n ',
  'tabs\tand\nnewlines\r\nmixed \t\n', 'a\u00a0b\u3000c\u2009d\u200be', 'x\u2028y\u2029z',
  // numbers
  '1234567890', '3.14159265358979', '1,000,000 and 1.000.000', '12345678901234567890123456789', '0x1F 0b1010 1e-7 -42 +7',
  '2024-06-01T12:34:56Z', 'Call 555-0100 or +1 (555) 010-0199', '٣٤٥ १२३ ๑๒๓ Ⅻ ½ ²',
  // code
  'def fib(n):\n    """Return the n-th Fibonacci number."""\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n',
  'const add = (a, b) => a + b;\nconsole.log(`sum: ${add(1, 2)}`); // 3\n',
  '{"name": "attnlab", "version": "0.1.0", "tags": ["a", "b"], "nested": {"x": null, "y": true, "z": 1.5e3}}',
  '#include <stdio.h>\nint main(void) {\n\tprintf("hello\\n");\n\treturn 0;\n}\n',
  '<div class="x">Hi &amp; bye</div>', '# Title\n\n* item one\n* item two\n\n```js\nx++\n```', 'https://example.com/path?q=1&r=2#frag user@example.org',
  // contractions
  "I'm you're he's we've they'll I'd can't won't", "I'M YOU'RE HE'S WE'VE THEY'LL I'D CAN'T", "don't DON'T Don'T dOn'T",
  "'s 'S 'll 'LL 'Ll 're 'RE 've 'VE 'm 'M 'd 'D 't 'T", "rock 'n' roll, the '90s, O'Neil's", "'ſ 'ſt",
  // special tokens' text inside ordinary text
  '<|endoftext|>', 'a<|endoftext|>b', 'Hi <|endoftext|> there<|endoftext|>', '<s>hello</s>', '<s> hello </s>', 'x<s>y',
  '<unk> <pad> <bos> <eos> <mask>', '<|begin_of_text|>Hi<|eot_id|>', '<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>',
  '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n', '<think>\nhmm\n</think>\n\nanswer', '<bos>x<eos>', '<|reserved_special_token_5|>',
  '<start_of_turn>user\nhi<end_of_turn>', '<0x0A> <0xFF> ▁ ▁▁x',
  // odd characters
  'Kelvin \u212a and Å sign \u212b', 'soft\u00adhyphen zero\u200dwidth\u200cnon-joiner', '\ufeffbom at start', 'next\u0085line',
  'é'.repeat(300), 'a'.repeat(1000), '!'.repeat(100), '.'.repeat(200), ' '.repeat(500) + 'x', '\n'.repeat(300), '—'.repeat(50),
  'The quick brown fox jumps over the lazy dog. '.repeat(20),
  // long texts
  fixture('kjv.txt'),
  readFileSync('/usr/share/games/fortunes/computers', 'utf8').slice(0, 8000),
];
