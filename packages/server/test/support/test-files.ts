import { crc32, deflateSync } from 'node:zlib';

/**
 * Real files made in the tests, byte for byte as their formats say: no fixture files to keep, and each probe's
 * bytes are visible where it is used.
 */

/** A PNG of `width` × `height` RGB pixels, each row a gradient, that any decoder opens. */
export function pngImage(width: number, height: number): Uint8Array {
  const row = (y: number) => [0, ...Array.from({ length: width }, (_, x) => [x * 40, y * 40, 200]).flat()];
  const pixels = Uint8Array.from(Array.from({ length: height }, (_, y) => row(y)).flat());
  return png(width, height, deflateSync(pixels));
}

/**
 * A decompression bomb: a PNG whose header says `width` × `height` pixels, with one small compressed row, so
 * that only a decoder that trusts the header before anything else would try to make room for all of them.
 */
export function pngBomb(width: number, height: number): Uint8Array {
  return png(width, height, deflateSync(new Uint8Array(1024)));
}

function png(width: number, height: number, compressed: Uint8Array): Uint8Array {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, no filter method, not interlaced
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', compressed),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, data: Uint8Array): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A one-page PDF showing `text`, with a correct cross-reference table. */
export function pdfDocument(text: string): Uint8Array {
  const stream = `BT /F1 24 Tf 72 720 Td (${text.replace(/[()\\]/g, '\\$&')}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let body = '%PDF-1.4\n%\u00e2\u00e3\u00cf\u00d3\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(Buffer.byteLength(body, 'latin1'));
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body, 'latin1');
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}
