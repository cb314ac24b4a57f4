import StoreSandbox
import Testing

@Suite struct StoreSandboxTests {
    @Test func apiVersion() {
        #expect(StoreSandbox.apiVersion == "v1")
    }
}
