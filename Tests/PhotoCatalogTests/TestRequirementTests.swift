// TestRequirement: a missing package skips with its name, and fails under CI; missing root skips.
import TestRequirements
import XCTest

final class TestRequirementTests: XCTestCase {
    override func tearDown() { unsetenv("CI") }

    func testAMissingPackageSkipsNamingItAndFailsUnderCI() throws {
        unsetenv("CI")
        XCTAssertNoThrow(try TestRequirement.program("/bin/sh", package: "dash"))
        XCTAssertThrowsError(try TestRequirement.program("/nonexistent/nginx", package: "nginx-light")) { error in
            XCTAssertTrue(error is XCTSkip, "\(error)")
            XCTAssertTrue("\(error)".contains("apt-get install nginx-light"), "\(error)")
        }
        setenv("CI", "true", 1)
        XCTAssertThrowsError(try TestRequirement.program("/nonexistent/nginx", package: "nginx-light")) { error in
            XCTAssertTrue(error is MissingRequirement, "under CI a missing package fails: \(error)")
            XCTAssertTrue("\(error)".contains("nginx-light"), "\(error)")
        }
    }

    func testRootIsAPrivilegeThatSkipsEvenUnderCI() throws {
        setenv("CI", "true", 1)
        if geteuid() == 0 {
            XCTAssertNoThrow(try TestRequirement.root("to mount"))
        } else {
            XCTAssertThrowsError(try TestRequirement.root("to mount")) { XCTAssertTrue($0 is XCTSkip, "\($0)") }
        }
    }
}
