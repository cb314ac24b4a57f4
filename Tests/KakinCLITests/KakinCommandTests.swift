import KakinCLI
import Testing

@Suite struct KakinCommandTests {
    @Test func parsesWithoutArguments() throws {
        _ = try KakinCommand.parseAsRoot([])
    }
}
