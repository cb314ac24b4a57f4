public import ArgumentParser

/// `kakin`: the command line of the Kakin in-app purchase system.
public struct KakinCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "kakin",
        abstract: "Kakin (課金): an in-app purchase system: Apple's formats, a local App Store, a purchase server.",
        subcommands: []
    )

    public init() {}
}
