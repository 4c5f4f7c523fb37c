// What Tokenizer.tokens() should show for a reference tokenizer's raw tokens, written from the definitions and
// independently of the engine: GPT-2's byte-to-character table reversed (byte-level files), SentencePiece's ▁ as a
// space and <0xAB> as its byte (byte-fallback files), added tokens as their text; then bytes that are UTF-8 shown as
// text and any other byte as <0xAB>.

// GPT-2's bytes_to_unicode: printable bytes stand for themselves, the others for U+0100 on, in byte order.
const byteOfChar = new Map();
{
  let next = 256;
  for (let b = 0; b < 256; ++b) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    byteOfChar.set(String.fromCodePoint(printable ? b : next++), b);
  }
}

const utf8 = new TextEncoder();

function byteLevelBytes(token) {
  const bytes = [];
  for (const ch of token) {
    if (!byteOfChar.has(ch)) return [...utf8.encode(token)];
    bytes.push(byteOfChar.get(ch));
  }
  return bytes;
}

function sentencePieceBytes(token) {
  const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(token);
  if (m) return [parseInt(m[1], 16)];
  return [...utf8.encode(token.replaceAll('▁', ' '))];
}

// Bytes as text: each well-formed UTF-8 sequence as its character, each other byte as <0xAB>.
function show(bytes) {
  let out = '';
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i];
    const n = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (n && i + n <= bytes.length) {
      const seq = Uint8Array.from(bytes.slice(i, i + n));
      try {
        out += new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(seq);
        i += n;
        continue;
      } catch { /* not well formed: shown byte by byte */ }
    }
    out += `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;
    i += 1;
  }
  return out;
}

/** `scheme`: 'byte-level' or 'sentencepiece'; `added`: the added tokens' contents. */
export function displayOf(tokens, scheme, added) {
  return tokens.map((t) => (added.has(t) ? t : show(scheme === 'byte-level' ? byteLevelBytes(t) : sentencePieceBytes(t))));
}
