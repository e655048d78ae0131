package wire

// CRC32C is the CRC-32C (Castagnoli) of data, as hash/crc32 computes with
// its Castagnoli table. Castagnoli's polynomial rather than IEEE's because
// it keeps a Hamming distance of 6 over far longer messages (Koopman,
// "32-bit cyclic redundancy codes for Internet applications", 2002), which
// suits short frames on a noisy UART; and a table of its own rather than
// hash/crc32's, which builds 8 KB of slicing tables on first use, too much
// RAM for a microcontroller under TinyGo. One byte per table look-up is
// plenty for frames of tens of bytes.
func CRC32C(data []byte) uint32 {
	crc := ^uint32(0)
	for _, b := range data {
		crc = crc32cTable[byte(crc)^b] ^ crc>>8
	}
	return ^crc
}

// crc32cTable is the byte-wise table of the reflected polynomial
// 0x82F63B78.
var crc32cTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0x82F63B78
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}()
