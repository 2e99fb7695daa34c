# Type stubs of the pliant package (the extension module pliant._pliant re-exported), so that
# editors complete and type checkers check calls. Units are SI; arrays are float64 unless noted.
# tests/python/test_stub.py keeps this file and the module in step.
from os import PathLike
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

__version__: str

FloatArray = npt.NDArray[np.float64]
IndexArray = npt.NDArray[np.uint32]
Int64Array = npt.NDArray[np.int64]
ArrayLike = npt.ArrayLike
Vec3Like = Union[Sequence[float], npt.NDArray[Any]]
QuatLike = Union[Sequence[float], npt.NDArray[Any]]
PathLikeStr = Union[str, PathLike[str]]
ParametersLike = Union["ConstraintParameters", Mapping[str, float], None]
MaterialLike = Union["ContactMaterial", Mapping[str, float], None]
Path = Callable[[float], Vec3Like]
RotationPath = Callable[[float], QuatLike]
ConstraintFunction = Callable[[FloatArray], Tuple[float, ArrayLike]]
VectorizedConstraintFunction = Callable[[FloatArray, Int64Array], Tuple[ArrayLike, ArrayLike]]

class Error(ValueError):
    """Bad input (a parameter, a scene file, a mesh, a checkpoint), named by field."""

class StepRefused(RuntimeError):
    """A refused step; the state is left as it was."""

    status: Optional[str]  # 'non-finite', 'excessive-displacement', 'excessive-strain' or 'contact-overflow'
    step: Optional[int]
    time: Optional[float]
    particle: Optional[int]
    constraint: Optional[Tuple[str, int]]
    collider: Optional[int]
    contact_particle: Optional[int]
    surface_contact: Optional[Tuple[str, Tuple[int, int, int, int]]]
    report: Optional[Dict[str, Any]]  # pliant.run's report when a run was refused

class ConstraintParameters:
    compliance: float  # XPBD, [C]^2/J (m/N for distances)
    damping: float  # XPBD, J s/[C]^2
    stiffness: float  # PBD, [0, 1]
    def __init__(self, compliance: float = 0.0, damping: float = 0.0, stiffness: float = 1.0) -> None: ...

class ContactMaterial:
    static_friction: float
    dynamic_friction: float
    restitution: float
    def __init__(self, static_friction: float = 0.0, dynamic_friction: float = 0.0, restitution: float = 0.0) -> None: ...

class Collider:
    @staticmethod
    def plane(point: Vec3Like, normal: Vec3Like, material: MaterialLike = None) -> Collider: ...
    @staticmethod
    def sphere(centre: Vec3Like, radius: float, material: MaterialLike = None) -> Collider: ...
    @staticmethod
    def box(
        centre: Vec3Like, half_extents: Vec3Like, rotation: Optional[QuatLike] = None, material: MaterialLike = None
    ) -> Collider: ...
    @staticmethod
    def capsule(a: Vec3Like, b: Vec3Like, radius: float, material: MaterialLike = None) -> Collider: ...
    @staticmethod
    def mesh(
        vertices: ArrayLike,
        triangles: ArrayLike,
        position: Optional[Vec3Like] = None,
        rotation: Optional[QuatLike] = None,
        cell_size: Optional[float] = None,
        max_cells_per_axis: Optional[int] = None,
        padding: Optional[float] = None,
        material: MaterialLike = None,
    ) -> Collider: ...
    @staticmethod
    def mesh_file(
        path: PathLikeStr,
        position: Optional[Vec3Like] = None,
        rotation: Optional[QuatLike] = None,
        scale: Optional[Vec3Like] = None,
        cell_size: Optional[float] = None,
        max_cells_per_axis: Optional[int] = None,
        padding: Optional[float] = None,
        material: MaterialLike = None,
    ) -> Collider: ...
    @property
    def shape(self) -> str: ...
    @property
    def position(self) -> FloatArray: ...
    @property
    def rotation(self) -> Tuple[float, float, float, float]: ...
    @property
    def radius(self) -> float: ...
    @property
    def half_height(self) -> float: ...
    @property
    def half_extents(self) -> FloatArray: ...
    @property
    def material(self) -> ContactMaterial: ...
    @property
    def kinematic(self) -> bool: ...
    @property
    def mesh_vertices(self) -> Optional[FloatArray]: ...
    @property
    def mesh_triangles(self) -> Optional[IndexArray]: ...
    def signed_distance(self, point: Vec3Like) -> Tuple[float, FloatArray]: ...

class GeneratedObject:
    @property
    def first_particle(self) -> int: ...
    @property
    def particle_count(self) -> int: ...
    @property
    def object(self) -> int: ...
    @property
    def particles(self) -> Int64Array: ...
    @property
    def triangles(self) -> IndexArray: ...
    @property
    def tets(self) -> IndexArray: ...
    @property
    def skin_triangles(self) -> IndexArray: ...
    def skin_points(self, positions: ArrayLike) -> FloatArray: ...

class ModelBuilder:
    self_collision: bool
    surface_thickness: float  # m
    particle_collisions: bool
    particle_contact_material: ContactMaterial
    surface_contact_material: ContactMaterial
    def __init__(self) -> None: ...
    @property
    def particle_count(self) -> int: ...
    def position(self, particle: int) -> FloatArray: ...
    def add_particle(self, position: Vec3Like, mass: float, velocity: Optional[Vec3Like] = None) -> int: ...
    def add_particles(
        self, positions: ArrayLike, masses: Union[float, ArrayLike], velocities: Optional[ArrayLike] = None
    ) -> Int64Array: ...
    def fix_particle(self, particle: int) -> None: ...
    def add_kinematic(self, particle: int, path: Path) -> None: ...
    def add_distance(
        self, a: int, b: int, params: ParametersLike = None, rest_length: Optional[float] = None
    ) -> int: ...
    def add_distances(
        self, pairs: ArrayLike, params: ParametersLike = None, rest_lengths: Optional[ArrayLike] = None
    ) -> Int64Array: ...
    def add_max_distance(
        self, a: int, b: int, params: ParametersLike = None, max_length: Optional[float] = None
    ) -> int: ...
    def add_attachment(
        self, particle: int, target: Vec3Like, params: ParametersLike = None, rest_distance: float = 0.0
    ) -> int: ...
    def add_moving_attachment(
        self, particle: int, path: Path, params: ParametersLike = None, rest_distance: float = 0.0
    ) -> int: ...
    def add_body_attachment(
        self,
        particle: int,
        body: int,
        point: Optional[Vec3Like] = None,
        params: ParametersLike = None,
        rest_distance: float = 0.0,
    ) -> int: ...
    def add_dihedral_bending(
        self, p0: int, p1: int, p2: int, p3: int, params: ParametersLike = None, rest_angle: Optional[float] = None
    ) -> int: ...
    def add_isometric_bending(self, p0: int, p1: int, p2: int, p3: int, params: ParametersLike = None) -> int: ...
    def add_tet_volume(self, p0: int, p1: int, p2: int, p3: int, params: ParametersLike = None) -> int: ...
    def add_neo_hookean_tet(self, p0: int, p1: int, p2: int, p3: int, material: Dict[str, float]) -> int: ...
    def add_shape_matching_cluster(
        self,
        particles: ArrayLike,
        mode: str = "rigid",
        beta: float = 0.5,
        preserve_volume: bool = True,
        params: ParametersLike = None,
    ) -> int: ...
    def add_shape_matching_clusters(
        self,
        particles: ArrayLike,
        cluster_size: float = 0.0,
        mode: str = "rigid",
        beta: float = 0.5,
        preserve_volume: bool = True,
        params: ParametersLike = None,
    ) -> Tuple[int, int]: ...
    def add_global_volume(self, triangles: ArrayLike, pressure: float = 1.0, params: ParametersLike = None) -> int: ...
    def add_constraint(
        self, function: ConstraintFunction, particles: ArrayLike, inequality: bool = False, params: ParametersLike = None
    ) -> int: ...
    def add_vectorized_constraint(
        self,
        function: VectorizedConstraintFunction,
        particles: ArrayLike,
        inequality: bool = False,
        params: ParametersLike = None,
    ) -> Int64Array: ...
    def set_particle_radius(self, particle: int, radius: float, count: int = 1) -> None: ...
    def add_collider(
        self, collider: Collider, path: Optional[Path] = None, rotation_path: Optional[RotationPath] = None
    ) -> int: ...
    def add_body(
        self,
        *,
        name: str = ...,
        shape: str = ...,
        radius: float = ...,
        half_height: float = ...,
        half_extents: Vec3Like = ...,
        points: Optional[ArrayLike] = ...,
        density: float = ...,
        mass: float = ...,
        motion: str = ...,
        position: Vec3Like = ...,
        rotation: QuatLike = ...,
        velocity: Vec3Like = ...,
        angular_velocity: Vec3Like = ...,
        material: MaterialLike = ...,
    ) -> int: ...
    def add_joint(
        self,
        *,
        type: str = ...,
        body_a: Optional[int] = ...,
        body_b: Optional[int] = ...,
        anchor: Vec3Like = ...,
        anchor_b: Vec3Like = ...,
        axis: Vec3Like = ...,
        rest_length: float = ...,
        compliance: float = ...,
        damping: float = ...,
        lower: float = ...,
        upper: float = ...,
        swing_limit: float = ...,
        drive: str = ...,
        drive_target: float = ...,
        drive_compliance: float = ...,
        drive_damping: float = ...,
    ) -> int: ...
    def add_collision_triangles(self, triangles: ArrayLike, enable: bool = True) -> int: ...
    def add_object(self, name: str, particles: ArrayLike, damping_factor: float = 0.0) -> int: ...
    def add_cloth_grid(
        self,
        *,
        name: str = ...,
        nodes_x: int = ...,
        nodes_y: int = ...,
        size_x: float = ...,
        size_y: float = ...,
        origin: Vec3Like = ...,
        axis_x: Vec3Like = ...,
        axis_y: Vec3Like = ...,
        total_mass: float = ...,
        stretch: ParametersLike = ...,
        bending: str = ...,
        bending_params: ParametersLike = ...,
        damping_factor: float = ...,
        self_collision: bool = ...,
    ) -> GeneratedObject: ...
    def add_chain(
        self,
        *,
        name: str = ...,
        particles: int = ...,
        start: Vec3Like = ...,
        end: Vec3Like = ...,
        particle_mass: float = ...,
        fix_start: bool = ...,
        stretch: ParametersLike = ...,
        damping_factor: float = ...,
    ) -> GeneratedObject: ...
    def add_tet_box(
        self,
        *,
        name: str = ...,
        cells_x: int = ...,
        cells_y: int = ...,
        cells_z: int = ...,
        origin: Vec3Like = ...,
        size: Vec3Like = ...,
        density: float = ...,
        volume: ParametersLike = ...,
        edges: ParametersLike = ...,
        add_edges: bool = ...,
        damping_factor: float = ...,
        neo_hookean: Optional[Dict[str, float]] = ...,
    ) -> GeneratedObject: ...
    def add_tet_mesh(
        self,
        vertices: ArrayLike,
        tets: ArrayLike,
        *,
        name: str = ...,
        density: float = ...,
        volume: ParametersLike = ...,
        edges: ParametersLike = ...,
        add_edges: bool = ...,
        damping_factor: float = ...,
        neo_hookean: Optional[Dict[str, float]] = ...,
    ) -> GeneratedObject: ...
    def add_soft_body_from_surface(
        self,
        vertices: ArrayLike,
        triangles: ArrayLike,
        *,
        name: str = ...,
        cell_size: float = ...,
        density: float = ...,
        translation: Vec3Like = ...,
        volume: ParametersLike = ...,
        edges: ParametersLike = ...,
        add_edges: bool = ...,
        damping_factor: float = ...,
        neo_hookean: Optional[Dict[str, float]] = ...,
    ) -> GeneratedObject: ...
    def add_cloth_mesh(
        self,
        vertices: ArrayLike,
        triangles: ArrayLike,
        *,
        name: str = ...,
        total_mass: float = ...,
        stretch: ParametersLike = ...,
        bending: str = ...,
        bending_params: ParametersLike = ...,
        damping_factor: float = ...,
        self_collision: bool = ...,
    ) -> GeneratedObject: ...
    def add_balloon(
        self,
        *,
        name: str = ...,
        centre: Vec3Like = ...,
        radius: float = ...,
        rings: int = ...,
        segments: int = ...,
        total_mass: float = ...,
        stretch: ParametersLike = ...,
        pressure: float = ...,
        volume: ParametersLike = ...,
        damping_factor: float = ...,
    ) -> GeneratedObject: ...
    def add_bending_constraints(self, triangles: ArrayLike, model: str = "dihedral", params: ParametersLike = None) -> int: ...
    def add_tethers(
        self,
        anchors: ArrayLike,
        first_particle: int,
        particle_count: int,
        params: ParametersLike = None,
        slack: float = 1.0,
    ) -> int: ...
    def build(self) -> Model: ...

class Model:
    families: Tuple[str, ...]  # constraint family names, in projection order
    @property
    def particle_count(self) -> int: ...
    @property
    def total_constraint_count(self) -> int: ...
    def constraint_count(self, family: str) -> int: ...
    @property
    def constraint_counts(self) -> Dict[str, int]: ...
    def lambda_slice(self, family: str) -> slice: ...
    @property
    def initial_positions(self) -> FloatArray: ...
    @property
    def initial_velocities(self) -> FloatArray: ...
    @property
    def masses(self) -> FloatArray: ...
    @property
    def inverse_masses(self) -> FloatArray: ...
    @property
    def particle_radii(self) -> FloatArray: ...
    def constraint_particles(self, family: str) -> IndexArray: ...
    def rest_values(self, family: str) -> FloatArray: ...
    def constraint_parameters(self, family: str) -> FloatArray: ...
    @property
    def tets(self) -> IndexArray: ...
    @property
    def collision_triangles(self) -> IndexArray: ...
    def volume_triangles(self, index: int) -> IndexArray: ...
    def cluster_particles(self, index: int) -> IndexArray: ...
    def generic_particles(self, index: int) -> IndexArray: ...
    @property
    def attachment_targets(self) -> FloatArray: ...
    @property
    def kinematic_particles(self) -> Int64Array: ...
    @property
    def objects(self) -> List[Dict[str, Any]]: ...
    @property
    def colliders(self) -> List[Collider]: ...
    @property
    def self_collision(self) -> bool: ...
    @property
    def surface_thickness(self) -> float: ...
    @property
    def particle_collisions(self) -> bool: ...
    @property
    def particle_contact_material(self) -> ContactMaterial: ...
    @property
    def surface_contact_material(self) -> ContactMaterial: ...
    @property
    def functions(self) -> str: ...

class State:
    positions: FloatArray  # (n, 3) m, a writable view
    velocities: FloatArray  # (n, 3) m/s
    previous_positions: FloatArray  # (n, 3) m
    external_forces: FloatArray  # (n, 3) N
    lambdas: FloatArray  # (m,)
    attachment_targets: FloatArray  # (a, 3) m
    body_positions: FloatArray  # (b, 3) m, centres of mass, a writable view
    body_velocities: FloatArray  # (b, 3) m/s
    body_angular_velocities: FloatArray  # (b, 3) rad/s, world axes
    time: float  # s
    step_count: int
    last_substep: float  # s
    def __init__(self, model: Model) -> None: ...
    @staticmethod
    def from_model(model: Model) -> State: ...
    @property
    def particle_count(self) -> int: ...
    def hash(self) -> int: ...
    def hash_hex(self) -> str: ...
    @property
    def body_rotations(self) -> FloatArray: ...  # (b, 4) w, x, y, z, a copy
    def joint_forces(self) -> FloatArray: ...  # (j, 3) N
    def joint_torques(self) -> FloatArray: ...  # (j, 3) N m
    @property
    def body_asleep(self) -> Any: ...  # (b,) bool, a copy
    def wake_body(self, body: int) -> None: ...
    def copy(self) -> State: ...
    def __copy__(self) -> State: ...
    def __deepcopy__(self, memo: Any) -> State: ...
    def assign(self, other: State) -> None: ...
    def save(self, path: PathLikeStr) -> None: ...
    @staticmethod
    def load(path: PathLikeStr, model: Model) -> State: ...

def save_checkpoint(path: PathLikeStr, state: State) -> None: ...
def load_checkpoint(path: PathLikeStr, model: Model) -> State: ...

class SolverSettings:
    mode: str  # 'pbd' or 'xpbd'
    time_step: float  # s
    substeps: int
    iterations: int
    gravity: FloatArray  # m/s^2
    iteration_independent_stiffness: bool
    velocity_damping: float  # 1/s
    max_displacement_per_step: float  # m
    divergence_factor: float
    max_strain: float
    check_steps: bool
    contact_margin: float  # m
    max_depenetration_velocity: float  # m/s
    parallel_block_size: int
    dynamic_friction_in_velocity_pass: bool
    body_contact_passes: int
    body_velocity_passes: int
    body_stack_mass_scaling: float  # 1/m
    body_collision_per_substep: bool
    sleeping: bool
    sleep_linear_speed: float  # m/s
    sleep_angular_speed: float  # rad/s
    sleep_time: float  # s
    def __init__(
        self,
        *,
        mode: str = ...,
        time_step: float = ...,
        substeps: int = ...,
        iterations: int = ...,
        gravity: Vec3Like = ...,
        iteration_independent_stiffness: bool = ...,
        velocity_damping: float = ...,
        max_displacement_per_step: float = ...,
        divergence_factor: float = ...,
        max_strain: float = ...,
        check_steps: bool = ...,
        contact_margin: float = ...,
        max_depenetration_velocity: float = ...,
        parallel_block_size: int = ...,
        dynamic_friction_in_velocity_pass: bool = ...,
        body_contact_passes: int = ...,
        body_velocity_passes: int = ...,
        body_stack_mass_scaling: float = ...,
        body_collision_per_substep: bool = ...,
        sleeping: bool = ...,
        sleep_linear_speed: float = ...,
        sleep_angular_speed: float = ...,
        sleep_time: float = ...,
    ) -> None: ...
    @staticmethod
    def pbd(**fields: Any) -> SolverSettings: ...
    @staticmethod
    def xpbd(**fields: Any) -> SolverSettings: ...
    @staticmethod
    def small_steps(substeps: int, time_step: float = ..., **fields: Any) -> SolverSettings: ...
    def validate(self) -> None: ...
    def copy(self) -> SolverSettings: ...
    def as_dict(self) -> Dict[str, Any]: ...

class Solver:
    settings: SolverSettings
    substep_observer: Optional[Callable[[State], Any]]
    def __init__(self, model: Model, settings: Optional[SolverSettings] = None) -> None: ...
    def step(self, state: State) -> None: ...
    def run(self, state: State, steps: int) -> None: ...
    @property
    def model(self) -> Model: ...
    def set_particle_mass(self, particle: int, mass: float) -> None: ...
    def fix_particle(self, particle: int) -> None: ...
    def release_particle(self, particle: int) -> None: ...
    def set_constraint_parameters(self, family: str, index: int, params: ParametersLike) -> None: ...
    @property
    def last_projection_count(self) -> int: ...
    @property
    def last_contact_count(self) -> int: ...
    stage_timing: bool
    def stage_times(self) -> Dict[str, float]: ...
    def body_attachment_force(self, attachment: int) -> Tuple[float, float, float]: ...
    def last_contacts(self, kind: str = "collider") -> Dict[str, npt.NDArray[Any]]: ...

def set_thread_count(threads: int) -> None: ...
def thread_count() -> int: ...
def available_cores() -> int: ...

class Topology:
    def __init__(
        self, triangles: Optional[ArrayLike] = None, lines: Optional[ArrayLike] = None, tets: Optional[ArrayLike] = None
    ) -> None: ...
    @property
    def triangles(self) -> IndexArray: ...
    @property
    def lines(self) -> IndexArray: ...
    @property
    def tets(self) -> IndexArray: ...

class Scene:
    settings: SolverSettings
    frames: int
    probe_every_substep: bool
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def model(self) -> Model: ...
    @property
    def topology(self) -> Topology: ...
    @property
    def objects(self) -> List[Dict[str, Any]]: ...
    @property
    def probes(self) -> List[Dict[str, Any]]: ...
    def solver(self) -> Solver: ...
    def state(self) -> State: ...

def load_scene(path: PathLikeStr, *, max_memory: Optional[Union[int, float, str]] = None) -> Scene: ...
def parse_scene(
    text: str,
    source: str = "<string>",
    base_directory: PathLikeStr = "",
    *,
    max_memory: Optional[Union[int, float, str]] = None,
) -> Scene: ...
def builtin_scene(name: str) -> Scene: ...
def builtin_scene_names() -> List[str]: ...
def builtin_scene_description(name: str) -> str: ...
def builtin_scene_text(name: str) -> str: ...
def benchmark_scene(name: str) -> Scene: ...
def benchmark_scene_names() -> List[str]: ...

class ProbeRecorder:
    def __init__(self, scene: Scene) -> None: ...
    @property
    def columns(self) -> List[str]: ...
    def record(self, state: State) -> None: ...
    @property
    def array(self) -> FloatArray: ...
    def csv(self) -> str: ...
    def clear(self) -> None: ...
    def __len__(self) -> int: ...

def energy(model: Model, state: State, settings: SolverSettings) -> Dict[str, float]: ...
def momentum(model: Model, state: State, particles: Optional[ArrayLike] = None) -> Dict[str, Any]: ...
def residual(model: Model, state: State, settings: SolverSettings) -> Dict[str, Any]: ...
def constraint_values(model: Model, state: State, family: str) -> FloatArray: ...
def constraint_forces(model: Model, state: State, family: str) -> FloatArray: ...
def constraint_force_vectors(model: Model, state: State, family: str, index: int) -> Tuple[Int64Array, FloatArray]: ...
def count_intersecting_triangle_pairs(positions: ArrayLike, triangles: ArrayLike) -> int: ...
def write_frame(
    path: PathLikeStr, state: State, topology: Optional[Topology] = None, format: Optional[str] = None
) -> None: ...
def run_benchmark(scene: Scene, threads: int, frames: int, stages: bool = False) -> Dict[str, Any]: ...
def run(
    scene: Union[Scene, PathLikeStr, None] = None,
    out: PathLikeStr = "out",
    *,
    frames: Optional[int] = None,
    format: str = "vtk",
    write_frames: bool = True,
    every: int = 1,
    threads: int = 0,
    checkpoint_every: int = 0,
    checkpoint_at: Optional[Sequence[int]] = None,
    resume: Optional[PathLikeStr] = None,
    html: Optional[PathLikeStr] = None,
    source: Optional[str] = None,
    progress: Optional[Callable[[int, int, int], Any]] = None,
) -> Dict[str, Any]: ...
def read_obj(path: PathLikeStr) -> Tuple[FloatArray, IndexArray]: ...
def read_tet_mesh(path: PathLikeStr) -> Tuple[FloatArray, IndexArray]: ...
def extract_surface(tets: ArrayLike) -> IndexArray: ...
