import Foundation
import KakinCore
import Testing

@Suite struct AnonymousAppUserIDTests {
    @Test func madeIDsAreWellFormedAnonymousAndDistinct() {
        let first = AnonymousAppUserID.make()
        let second = AnonymousAppUserID.make()
        #expect(first != second)
        for id in [first, second] {
            #expect(AnonymousAppUserID.isAnonymous(id))
            #expect(AnonymousAppUserID.isWellFormed(id))
            #expect(id.count == AnonymousAppUserID.prefix.count + 32)
        }
    }

    @Test(arguments: [
        "$kakin_anon_0123456789ABCDEF0123456789abcdef",  // uppercase digits
        "$kakin_anon_0123456789abcdef0123456789abcde",  // 31 digits
        "$kakin_anon_0123456789abcdef0123456789abcdef0",  // 33 digits
        "$kakin_anon_0123456789abcdef-123456789abcdef",  // not a digit
        "$kakin_anon_",
    ])
    func anythingElseAfterThePrefixIsAnonymousButMalformed(id: String) {
        #expect(AnonymousAppUserID.isAnonymous(id))
        #expect(!AnonymousAppUserID.isWellFormed(id))
    }

    @Test(arguments: ["alice", "", "kakin_anon_0123456789abcdef0123456789abcdef", "$KAKIN_ANON_x"])
    func otherIDsAreIdentified(id: String) {
        #expect(!AnonymousAppUserID.isAnonymous(id))
        #expect(!AnonymousAppUserID.isWellFormed(id))
    }
}

@Suite struct JSONOutputWriterTests {
    private struct Sample: Encodable {
        var text: String
        var count: Int64
        var flag: Bool
        var counts: [String: Int]
    }

    private func encoded(_ sample: Sample) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(sample), as: UTF8.self)
    }

    @Test(arguments: ["plain", "", "quote \" backslash \\ slash /", "tab\tline\nreturn\r", "\u{0}\u{1F}\u{7F}", "日本語 ✓"])
    func writesWhatTheEncoderWrites(text: String) throws {
        let sample = Sample(text: text, count: Int64.min, flag: true, counts: ["b": 2, "a": -1, "ä": 0])
        var output = JSONOutput()
        output.object { output in
            output.field("count", sample.count)
            output.key("counts")
            output.object { output in
                for (key, value) in sample.counts.sorted(by: { $0.key < $1.key }) {
                    output.key(key)
                    output.integer(value)
                }
            }
            output.field("flag", sample.flag)
            output.field("text", sample.text)
        }
        #expect(String(decoding: output.bytes, as: UTF8.self) == (try encoded(sample)))
    }

    @Test func integersAtTheirLimits() {
        for value in [Int64.min, -1, 0, 9, 10, Int64.max] {
            var output = JSONOutput()
            output.integer(value)
            #expect(output.bytes == Array(String(value).utf8))
        }
    }

    @Test func absentFieldsAreLeftOutAndArraysAreSeparated() {
        var output = JSONOutput()
        output.array([1, 2, 3]) { output, element in
            output.object { output in
                output.field("n", element)
                output.field("missing", nil as String?)
            }
        }
        #expect(String(decoding: output.bytes, as: UTF8.self) == #"[{"n":1},{"n":2},{"n":3}]"#)
    }
}
