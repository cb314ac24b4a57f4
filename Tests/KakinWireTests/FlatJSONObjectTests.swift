import Foundation
import KakinWire
import Testing

/// The fast reader of simple bodies must never disagree with `JSONDecoder`: whatever it accepts
/// decodes to the same strings, and everything else is left to the decoder.
@Suite struct FlatJSONObjectTests {
    static let texts: [String] = [
        "", "plain", "q\"uote", "back\\slash", "a/b", "tab\tnew\nline", "ürün", "課金", "🙂 emoji",
        "\u{2028}sep", "eyJhbGciOiJFUzI1NiJ9.eyJ0cmFuc2FjdGlvbklkIjoiMSJ9.c2ln", "  spaced  ",
    ]

    @Test("whatever it reads, JSONDecoder reads to the same strings; bodies without escapes are read")
    func agreesWithJSONDecoder() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            var object: [String: String] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                object[Self.texts.randomElement(using: &generator)!] = Self.texts.randomElement(using: &generator)!
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = Bool.random(using: &generator) ? [.withoutEscapingSlashes] : [.prettyPrinted]
            let bytes = [UInt8](try encoder.encode(object))
            let expected = try JSONDecoder().decode([String: String].self, from: Data(bytes))
            let fast = FlatJSONObject.strings(bytes)
            if let fast { #expect(fast == expected) }
            if !bytes.contains(UInt8(ascii: "\\")) { #expect(fast == expected, "\(String(decoding: bytes, as: UTF8.self))") }
        }
    }

    @Test("a submission is read without JSONDecoder, and anything unusual is left to it")
    func submissions() throws {
        let body = #" { "bundleId" : "com.example.kakin", "appUserId":"alice","signedTransaction":"a.b.c" } "#
        #expect(
            TransactionSubmission(flatJSON: Array(body.utf8))
                == TransactionSubmission(bundleId: "com.example.kakin", appUserId: "alice", signedTransaction: "a.b.c"))
        #expect(FlatJSONObject.strings(Array("{}".utf8)) == [:])
        let refused: [[UInt8]] = [
            Array(#"{"bundleId":"a","appUserId":"b"}"#.utf8),  // a field missing
            Array(#"{"bundleId":"a","appUserId":"b","signedTransaction":1}"#.utf8),  // not a string
            Array(#"{"bundleId":"a","bundleId":"b","appUserId":"b","signedTransaction":"c"}"#.utf8),  // repeated
            Array(#"{"bundleId":"a\u0041","appUserId":"b","signedTransaction":"c"}"#.utf8),  // an escape
            Array(#"{"bundleId":"a","appUserId":"b","signedTransaction":"c"} x"#.utf8),  // trailing bytes
            Array(#"{"bundleId":"a","appUserId":"b","signedTransaction":"c""#.utf8),  // cut short
            Array(#"{"bundleId":"a","appUserId":"b","signedTransaction":{"c":"d"}}"#.utf8),  // nested
            Array(#"["a"]"#.utf8), [],
            Array(#"{"bundleId":""#.utf8) + [0xFF, 0xFE] + Array(#"","appUserId":"b","signedTransaction":"c"}"#.utf8),
            Array(#"{"bundleId":"a"#.utf8) + [0x01] + Array(#"","appUserId":"b","signedTransaction":"c"}"#.utf8),
        ]
        for bytes in refused {
            #expect(TransactionSubmission(flatJSON: bytes) == nil, "\(String(decoding: bytes, as: UTF8.self))")
        }
    }

    @Test("an escape or a control character anywhere in a long value is seen, eight bytes at a time or one")
    func longValues() throws {
        let plain = String(repeating: "eyJhbGciOiJFUzI1NiJ9.", count: 3)
        for position in 0...plain.utf8.count {
            for insert in ["\\n", "\\\"", "\u{01}", "\u{1F}"] {
                var value = Array(plain.utf8)
                value.insert(contentsOf: Array(insert.utf8), at: position)
                let body = Array(#"{"k":""#.utf8) + value + Array(#""}"#.utf8)
                let decoded = try? JSONDecoder().decode([String: String].self, from: Data(body))
                #expect(FlatJSONObject.strings(body) == nil, "\(insert) at \(position): left to JSONDecoder (\(decoded != nil))")
            }
            let body = Array(#"{"k":""#.utf8) + Array(plain.utf8.prefix(position)) + Array(#""}"#.utf8)
            #expect(FlatJSONObject.strings(body) == ["k": String(plain.prefix(position))])
        }
    }
}
