// sbt build for the SoC RTL. hw/Makefile copies this file into an sbt root under BUILD_DIR
// (so every `target/` directory lands in the build tree, never in hw/) and passes the source
// locations as system properties. Run it through `make -C hw ...`, not by hand.
//
//   uintr.hw      absolute path of hw/ (our Scala sources)
//   uintr.rocket  rocket-chip 1.2.6 sources extracted from the -sources.jar, our patches applied
//   uintr.gen     the platform constant generator (platform/gen.py)

def required(name: String): File = sys.props.get(name).map(file).getOrElse(
  sys.error(s"system property $name is not set; build through hw/Makefile"))

lazy val hwDir     = required("uintr.hw")
lazy val rocketDir = required("uintr.rocket")
lazy val genPy     = required("uintr.gen")

ThisBuild / scalaVersion := "2.12.10"
ThisBuild / organization := "uintr"
ThisBuild / version      := "0.1"

// Paradise is what rocket-chip's @chiselName and friends need on Scala 2.12.
lazy val paradise = Seq(
  addCompilerPlugin("org.scalamacros" % "paradise_2.12.10" % "2.1.1"),
  scalacOptions ++= Seq("-Xsource:2.11", "-language:reflectiveCalls"),
  Compile / doc / sources := Nil,        // scaladoc of rocket-chip is slow and useless here
  Compile / packageDoc / publishArtifact := false
)

// The -sources.jar flattens three upstream projects into one tree: the ValName macro and the
// hardfloat files sit at the top level, next to rocket-chip's package object; rocket-chip proper
// lives in package directories. Sort the top-level files by the package they declare.
def declaredPackage(f: File): String =
  IO.readLines(f).map(_.trim).find(_.startsWith("package ")).map(_.stripPrefix("package ").trim).getOrElse("")
lazy val macroSources     = Def.setting((rocketDir * "*.scala").get.filter(declaredPackage(_) == "freechips.rocketchip.macros"))
lazy val hardfloatSources = Def.setting((rocketDir * "*.scala").get.filter(declaredPackage(_) == "hardfloat"))

lazy val macros = (project in file("macros"))
  .settings(paradise)
  .settings(
    libraryDependencies += "org.scala-lang" % "scala-reflect" % scalaVersion.value,
    Compile / unmanagedSourceDirectories := Nil,
    Compile / unmanagedSources := macroSources.value.sorted
  )

lazy val hardfloat = (project in file("hardfloat"))
  .settings(paradise)
  .settings(
    libraryDependencies += "edu.berkeley.cs" %% "chisel3" % "3.2.6",
    Compile / unmanagedSourceDirectories := Nil,
    Compile / unmanagedSources := hardfloatSources.value.sorted
  )

lazy val rocketchip = (project in file("rocketchip"))
  .dependsOn(macros, hardfloat)
  .settings(paradise)
  .settings(
    libraryDependencies ++= Seq(
      "edu.berkeley.cs" %% "chisel3" % "3.2.6",
      "org.scala-lang"  % "scala-reflect" % scalaVersion.value,
      "org.json4s"     %% "json4s-jackson" % "3.6.1"
    ),
    Compile / unmanagedSourceDirectories := Nil,
    Compile / unmanagedSources :=
      ((rocketDir ** "*.scala").get.toSet -- macroSources.value -- hardfloatSources.value).toSeq.sorted,
    // vsrc/ and csrc/ must be classpath resources: BlackBox helpers look them up as /vsrc/*.v.
    Compile / unmanagedResourceDirectories := Seq(rocketDir),
    Compile / unmanagedResources := ((rocketDir / "vsrc" ** "*").get ++ (rocketDir / "csrc" ** "*").get).filter(_.isFile),
    // our core patches (hw/patches) read CSR numbers and uipi encodings from platform.toml too
    platformConstants
  )

// Shared constants from platform/platform.toml, regenerated on every compile (gen.py only
// rewrites the file when its text changes, so this does not force recompilation).
lazy val platformConstants = Compile / sourceGenerators += Def.task {
  val out = (Compile / sourceManaged).value / "uintr" / "platform" / "Platform.scala"
  IO.createDirectory(out.getParentFile)
  val rc = scala.sys.process.Process(Seq("python3", genPy.getPath, "--scala", out.getPath)).!
  if (rc != 0) sys.error(s"platform/gen.py failed with exit code $rc")
  Seq(out)
}.taskValue

// Our own code gets the warnings rocket-chip's would drown.
lazy val ours = Seq(scalacOptions ++= Seq("-deprecation", "-unchecked", "-feature"))

lazy val uintc = (project in file("uintc"))
  .dependsOn(rocketchip)
  .settings(paradise, ours)
  .settings(
    // uintr.platform.Platform comes from the rocketchip project (generated there, see above)
    Compile / unmanagedSourceDirectories := Seq(hwDir / "uintc" / "src" / "main" / "scala"),
    Test / unmanagedSourceDirectories := Seq(hwDir / "uintc" / "src" / "test" / "scala"),
    libraryDependencies += "edu.berkeley.cs" %% "chisel-iotesters" % "1.3.0" % Test,
    // In-process: scalatest 3.0's socket reporter (used for forked tests) drops every event
    // after a failure under sbt 1.10, hiding which test failed. sbt's own heap (3 GiB) suffices.
    Test / fork := false,
    Test / parallelExecution := false
  )

lazy val soc = (project in file("soc"))
  .dependsOn(uintc)
  .settings(paradise, ours)
  .settings(
    Compile / unmanagedSourceDirectories := Seq(hwDir / "soc" / "src" / "main" / "scala"),
    run / fork := true,
    run / javaOptions ++= Seq("-Xmx4g", "-Xss8m"),
    // the Generator writes relative files (bootrom image lookup is absolute, see Configs)
    run / baseDirectory := (ThisBuild / baseDirectory).value,
    outputStrategy := Some(StdoutOutput)
  )

lazy val root = (project in file("."))
  .aggregate(macros, hardfloat, rocketchip, uintc, soc)
  .settings(publish / skip := true)
