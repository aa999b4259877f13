/** SHA-256 of the UTF-8 bytes of `text`, in hex. */
export function sha256Hex(text: string): string;
