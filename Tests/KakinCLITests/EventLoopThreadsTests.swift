import Testing

@testable import KakinCLI

/// How many event loop threads a serving command asks for, read before the command is parsed.
@Suite struct EventLoopThreadsTests {
    @Test func theOptionOverTheEnvironment() {
        let environment = ["KAKIN_THREADS": "4"]
        #expect(KakinCommand.eventLoopThreads(arguments: ["kakin", "server", "--threads", "1"], environment: environment) == 1)
        #expect(KakinCommand.eventLoopThreads(arguments: ["kakin", "serve", "--threads=3"], environment: environment) == 3)
        #expect(KakinCommand.eventLoopThreads(arguments: ["kakin", "serve"], environment: environment) == 4)
        #expect(KakinCommand.eventLoopThreads(arguments: ["kakin", "serve"], environment: [:]) == nil)
    }

    @Test func badValuesAskForNothing() {
        for arguments in [["--threads", "0"], ["--threads=-1"], ["--threads", "many"], ["--threads"], ["--", "--threads", "2"]] {
            #expect(KakinCommand.eventLoopThreads(arguments: ["kakin", "server"] + arguments, environment: [:]) == nil)
        }
        #expect(KakinCommand.eventLoopThreads(arguments: ["kakin", "server"], environment: ["KAKIN_THREADS": "none"]) == nil)
        #expect(throws: (any Error).self) { try KakinCommand.validateThreads(0, environment: [:]) }
        #expect(throws: (any Error).self) { try KakinCommand.validateThreads(nil, environment: ["KAKIN_THREADS": "0"]) }
        #expect(throws: Never.self) { try KakinCommand.validateThreads(2, environment: ["KAKIN_THREADS": "bad"]) }
    }
}
