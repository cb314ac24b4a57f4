import Foundation
import KakinCLI
import Testing

@Suite struct SandboxCommandTests {
    @Test func optionsAreValidated() {
        #expect(throws: (any Error).self) {
            try KakinCommand.parseAsRoot(["sandbox", "--catalog", "/nonexistent.storekit"])
        }
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["sandbox", "--port", "70000"]) }
    }
}
