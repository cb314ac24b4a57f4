/// A raw DEFLATE (RFC 1951) decoder for zip entries, written in Swift because Foundation on Linux
/// exposes no zlib. It handles stored, fixed-Huffman and dynamic-Huffman blocks, and refuses to
/// produce more than the size the archive announced.
enum Inflate {
    /// Why a stream could not be decoded.
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Decodes `input`, which must expand to exactly `expectedSize` bytes.
    static func decompress(_ input: [UInt8], expectedSize: Int) throws(Failure) -> [UInt8] {
        var reader = BitReader(bytes: input)
        var output: [UInt8] = []
        output.reserveCapacity(expectedSize)
        var last = false
        while !last {
            last = try reader.bits(1) == 1
            switch try reader.bits(2) {
            case 0: try stored(&reader, into: &output, limit: expectedSize)
            case 1: try codes(&reader, into: &output, limit: expectedSize, tables: fixedTables.get())
            case 2: try codes(&reader, into: &output, limit: expectedSize, tables: try dynamicTables(&reader))
            default: throw Failure("invalid block type")
            }
        }
        guard output.count == expectedSize else {
            throw Failure("expanded to \(output.count) bytes, expected \(expectedSize)")
        }
        return output
    }

    private static let lengthBase = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227,
        258,
    ]
    private static let lengthExtra = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ]
    private static let distanceBase = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
        6145, 8193, 12289, 16385, 24577,
    ]
    private static let distanceExtra = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
    ]
    /// The order in which a dynamic block lists the code lengths of its code-length alphabet.
    private static let codeLengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    /// The fixed codes of RFC 1951 §3.2.6, built once.
    private static let fixedTables: Result<(literals: Huffman, distances: Huffman), Failure> = {
        var lengths = [Int](repeating: 8, count: 288)
        for symbol in 144..<256 { lengths[symbol] = 9 }
        for symbol in 256..<280 { lengths[symbol] = 7 }
        return Result { () throws(Failure) in
            (try Huffman(lengths: lengths), try Huffman(lengths: [Int](repeating: 5, count: 30)))
        }
    }()

    private static func stored(_ reader: inout BitReader, into output: inout [UInt8], limit: Int) throws(Failure) {
        reader.alignToByte()
        let length = try reader.byte() | (try reader.byte()) << 8
        let complement = try reader.byte() | (try reader.byte()) << 8
        guard length == ~complement & 0xFFFF else { throw Failure("stored block length check failed") }
        guard output.count + length <= limit else { throw Failure("expands past the announced size") }
        for _ in 0..<length { output.append(UInt8(try reader.byte())) }
    }

    private static func dynamicTables(
        _ reader: inout BitReader
    ) throws(Failure) -> (literals: Huffman, distances: Huffman) {
        let literalCount = try reader.bits(5) + 257
        let distanceCount = try reader.bits(5) + 1
        let codeLengthCount = try reader.bits(4) + 4
        guard literalCount <= 286, distanceCount <= 30 else { throw Failure("too many codes") }
        var codeLengthLengths = [Int](repeating: 0, count: 19)
        for index in 0..<codeLengthCount { codeLengthLengths[codeLengthOrder[index]] = try reader.bits(3) }
        let codeLengths = try Huffman(lengths: codeLengthLengths)
        var lengths: [Int] = []
        while lengths.count < literalCount + distanceCount {
            let symbol = try codeLengths.decode(&reader)
            switch symbol {
            case 0..<16: lengths.append(symbol)
            case 16:
                guard let previous = lengths.last else { throw Failure("repeat with no previous length") }
                lengths += [Int](repeating: previous, count: 3 + (try reader.bits(2)))
            case 17: lengths += [Int](repeating: 0, count: 3 + (try reader.bits(3)))
            default: lengths += [Int](repeating: 0, count: 11 + (try reader.bits(7)))
            }
        }
        guard lengths.count == literalCount + distanceCount else { throw Failure("code lengths overrun") }
        guard lengths[256] != 0 else { throw Failure("no end-of-block code") }
        return (
            try Huffman(lengths: Array(lengths[..<literalCount])), try Huffman(lengths: Array(lengths[literalCount...]))
        )
    }

    private static func codes(
        _ reader: inout BitReader, into output: inout [UInt8], limit: Int,
        tables: (literals: Huffman, distances: Huffman)
    ) throws(Failure) {
        while true {
            let symbol = try tables.literals.decode(&reader)
            if symbol < 256 {
                guard output.count < limit else { throw Failure("expands past the announced size") }
                output.append(UInt8(symbol))
                continue
            }
            if symbol == 256 { return }
            let index = symbol - 257
            guard index < lengthBase.count else { throw Failure("invalid length code") }
            let length = lengthBase[index] + (try reader.bits(lengthExtra[index]))
            let distanceSymbol = try tables.distances.decode(&reader)
            guard distanceSymbol < distanceBase.count else { throw Failure("invalid distance code") }
            let distance = distanceBase[distanceSymbol] + (try reader.bits(distanceExtra[distanceSymbol]))
            guard distance <= output.count else { throw Failure("distance before the start of the output") }
            guard output.count + length <= limit else { throw Failure("expands past the announced size") }
            let start = output.count - distance
            for offset in 0..<length { output.append(output[start + offset]) }
        }
    }
}

/// Reads a DEFLATE stream's bits, least significant first.
private struct BitReader {
    let bytes: [UInt8]
    var position = 0
    var buffer: UInt32 = 0
    var count = 0

    mutating func bits(_ needed: Int) throws(Inflate.Failure) -> Int {
        while count < needed {
            guard position < bytes.count else { throw Inflate.Failure("the stream ends early") }
            buffer |= UInt32(bytes[position]) << UInt32(count)
            position += 1
            count += 8
        }
        let value = Int(buffer & ((1 << UInt32(needed)) - 1))
        buffer >>= UInt32(needed)
        count -= needed
        return value
    }

    /// Drops the bits left in the current byte (fewer than 8 are ever buffered).
    mutating func alignToByte() {
        buffer = 0
        count = 0
    }

    mutating func byte() throws(Inflate.Failure) -> Int {
        guard position < bytes.count else { throw Inflate.Failure("the stream ends early") }
        defer { position += 1 }
        return Int(bytes[position])
    }
}

/// A canonical Huffman code given by its code lengths, decoded one bit at a time.
private struct Huffman {
    /// How many codes have each length, 0…15.
    var counts = [Int](repeating: 0, count: 16)
    /// Symbols ordered by code.
    var symbols: [Int] = []

    init(lengths: [Int]) throws(Inflate.Failure) {
        for length in lengths { counts[length] += 1 }
        var left = 1
        for length in 1..<16 {
            left = left << 1 - counts[length]
            guard left >= 0 else { throw Inflate.Failure("over-subscribed code lengths") }
        }
        var offsets = [Int](repeating: 0, count: 16)
        for length in 1..<15 { offsets[length + 1] = offsets[length] + counts[length] }
        symbols = [Int](repeating: 0, count: lengths.count)
        for (symbol, length) in lengths.enumerated() where length != 0 {
            symbols[offsets[length]] = symbol
            offsets[length] += 1
        }
    }

    func decode(_ reader: inout BitReader) throws(Inflate.Failure) -> Int {
        var code = 0
        var first = 0
        var index = 0
        for length in 1..<16 {
            code |= try reader.bits(1)
            let count = counts[length]
            if code - count < first { return symbols[index + code - first] }
            index += count
            first = (first + count) << 1
            code <<= 1
        }
        throw Inflate.Failure("invalid Huffman code")
    }
}
