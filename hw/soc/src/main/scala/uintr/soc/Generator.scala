package uintr.soc

import java.io.{File, FileWriter}

import firrtl.annotations.JsonProtocol
import freechips.rocketchip.util.{ElaborationArtefacts, HasGeneratorUtilities}

/** Elaborates [[UintrSystem]] for one config and compiles it to Verilog in the same JVM.
  *
  *   Generator TARGET_DIR CONFIG BOOTROM_IMG
  *
  * Writes into TARGET_DIR: UintrSystem.fir, .anno.json, .v, the elaboration artefacts (.dts,
  * .json, .memmap.json, .graphml, .plusArgs) and the Verilog of the black boxes
  * (plusarg_reader.v, ... listed in firrtl_black_box_resource_files.f).
  * Memories stay behavioural arrays (no --repl-seq-mem), which Verilator and yosys accept. */
object Generator extends HasGeneratorUtilities {
  val topClass = "uintr.soc.UintrSystem"

  private def write(dir: File, name: String, text: String): File = {
    val f = new File(dir, name)
    val w = new FileWriter(f)
    try w.write(text) finally w.close()
    f
  }

  def main(args: Array[String]): Unit = {
    require(args.length == 3, "usage: Generator TARGET_DIR CONFIG BOOTROM_IMG")
    val Array(targetDir, configName, bootrom) = args
    require(new File(bootrom).isFile, s"boot ROM image $bootrom does not exist")
    sys.props("uintr.bootrom") = new File(bootrom).getAbsolutePath

    val td = new File(targetDir)
    td.mkdirs()
    val configClass = if (configName.contains(".")) configName else s"uintr.soc.$configName"
    val params = getParameters(Seq(configClass))

    val t0 = System.nanoTime()
    val circuit = elaborate(topClass, params)
    val top = circuit.name
    val fir = new File(td, s"$top.fir")
    chisel3.Driver.dumpFirrtl(circuit, Some(fir))
    val anno = write(td, s"$top.anno.json", JsonProtocol.serialize(circuit.annotations.map(_.toFirrtl)))
    ElaborationArtefacts.files.foreach { case (ext, contents) => write(td, s"$top.$ext", contents()) }
    val t1 = System.nanoTime()
    println(f"[generator] elaborated $configName in ${(t1 - t0) / 1e9}%.1f s")

    (new firrtl.stage.FirrtlStage).execute(Array(
      "-i", fir.getPath,
      "-faf", anno.getPath,
      "-td", td.getPath,
      "-o", s"$top.v",
      "-X", "verilog"), Seq.empty)
    println(f"[generator] FIRRTL to Verilog in ${(System.nanoTime() - t1) / 1e9}%.1f s")
  }
}
