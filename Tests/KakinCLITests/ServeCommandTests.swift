import Foundation
import KakinCLI
import Testing

@Suite struct ServeCommandTests {
    @Test func invalidSettingsAreRefusedWithAClearMessage() {
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["serve", "--port", "0"]) }
        #expect(throws: (any Error).self) {
            try KakinCommand.parseAsRoot(["serve", "--port", "9000", "--sandbox-port", "9000"])
        }
        #expect(throws: (any Error).self) {
            try KakinCommand.parseAsRoot(["serve", "--catalog", "/nonexistent.storekit"])
        }
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["serve", "--clawback-policy", "maybe"]) }
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["serve", "--webhook", "no-secret"]) }
    }

    @Test func defaultsParse() throws {
        _ = try KakinCommand.parseAsRoot(["serve", "--webhook", "https://example.com/hook=secret"])
    }
}
