import { Buffer } from 'node:buffer';
import { BodyDecoder } from '../../../transport/body-decoder.js';
import { isUtf8Label, type XmlEnvelopeScanner } from './scanner.js';

/**
 * Scanners are reused across requests (reset clears them, even after an error). `E` is what they
 * read a body into: the compiled call (the binding) or the reference's SoapEnvelope (tests).
 */
export class ScannerPool<E> {
  private readonly free: XmlEnvelopeScanner<E>[] = [];
  constructor(
    private readonly create: () => XmlEnvelopeScanner<E>,
    private readonly max = 256,
  ) {}

  acquire(): XmlEnvelopeScanner<E> {
    return this.free.pop() ?? this.create();
  }

  release(scanner: XmlEnvelopeScanner<E>): void {
    if (this.free.length < this.max) this.free.push(scanner);
  }
}

/**
 * One SOAP request body into what its scanner builds (`E`), in the charset it declares: the Content-Type charset,
 * else the XML declaration's encoding, else UTF-8 (BodyDecoder's rules). UTF-8, nearly every
 * request, streams into the scanner as bytes. Any other charset is decoded by BodyDecoder as
 * before and the text re-encoded as UTF-8 for the scanner, so one XML reader serves all.
 *
 * Without a charset parameter the scanner reads the bytes as UTF-8 until the XML declaration
 * names another encoding; it then stops, and the body is read again from the start through
 * BodyDecoder (which decides from the same declaration). The chunks are kept only until the
 * first token is read, normally within the first chunk.
 */
export class SoapBodyReader<E> {
  private decoder: BodyDecoder | null = null;
  private readonly scanner: XmlEnvelopeScanner<E>;
  /** Copies of the chunks read while the declaration may still switch the charset; null once settled. */
  private head: Uint8Array[] | null = null;

  constructor(
    charset: string | null,
    private readonly pool: ScannerPool<E>,
  ) {
    const declared = charset !== null && charset !== '';
    // Throws UnsupportedCharsetError for a charset Node cannot decode, before taking a scanner.
    if (declared && !isUtf8Label(charset)) this.decoder = new BodyDecoder(charset);
    this.scanner = pool.acquire();
    this.scanner.reset({ bom: this.decoder === null, stopOnForeignEncoding: !declared });
    if (!declared) this.head = [];
  }

  push(chunk: Uint8Array, last: boolean): void {
    if (this.decoder !== null) {
      this.transcode(chunk, last);
      return;
    }
    this.scanner.write(chunk);
    if (this.head === null) return;
    if (this.scanner.foreignEncoding !== null) {
      this.head.push(chunk);
      const body = Buffer.concat(this.head);
      this.head = null;
      this.decoder = new BodyDecoder(null);
      this.scanner.reset({ bom: false, stopOnForeignEncoding: false });
      this.transcode(body, last);
    } else if (this.scanner.encodingSettled) this.head = null;
    else this.head.push(Uint8Array.from(chunk));
  }

  /**
   * What the scanner read, once the whole body was pushed. It may point into the scanner's reused
   * memory (a compiled call's slots): `release` the scanner only when done with it.
   */
  end(): E {
    return this.scanner.end();
  }

  /** The scanner goes back to the pool (after `end`; a scanner that failed is simply dropped). */
  release(): void {
    this.pool.release(this.scanner);
  }

  private transcode(chunk: Uint8Array, last: boolean): void {
    const text = this.decoder!.push(chunk, last);
    if (text !== '') this.scanner.write(Buffer.from(text, 'utf8'));
  }
}
