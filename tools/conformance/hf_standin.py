"""A stand-in for `transformers` (config side only) that answers as one pinned version does.

SGLang's own config loader (`get_config` in `hf_transformers_utils.py`, from 0.5.11
`utils/hf_transformers/config.py`) runs unchanged on top of it:

- `AutoConfig.from_pretrained` reads `config.json` (a directory or the file itself),
  honours `auto_map` + `trust_remote_code` the way transformers' `resolve_trust_remote_code`
  does, and refuses a model type the pinned version does not know with transformers'
  own `ValueError` wording ("... has model type `X` but Transformers does not recognize
  this architecture ..."), so SGLang's fallbacks (e.g. `deepseek_v32` reloaded as
  DeepseekV3) take their real branch.
- `AutoConfig.register` refuses a type transformers already owns, as transformers does;
  what SGLang registers counts as known afterwards (from 5.6 it also beats remote code).
- Config objects are attribute objects over the config's fields, filled with the
  literal defaults of their class (transformers' or SGLang's, see hf_configs.py), with
  sub-configs (`text_config`, `vision_config`, ...) as nested objects, `attribute_map`
  aliases, and the `PretrainedConfig` methods SGLang calls (`to_dict`, `update`,
  `get_text_config`, `from_pretrained`, `from_dict`, `get_config_dict`).
- A config class name the pinned version lacks is an ImportError (`from transformers
  import DeepseekV3Config` inside SGLang's own `try`), other names are inert placeholders.

Classes are per world: every class of one runtime subclasses that runtime's
`PretrainedConfig`, so SGLang's `isinstance` checks behave, and SGLang's own config
classes (`sglang/srt/configs/*.py`) are stand-ins of the same kind, keyed by name.
"""

from __future__ import annotations

import ast
import functools
import json
import logging
import types
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from conformance import stubs
from conformance.hf_configs import ConfigFacts, sglang_config_facts, transformers_facts

# transformers' PretrainedConfig fields every config has (the ones SGLang reads).
_BASE_FIELDS: dict[str, Any] = {
    "architectures": None,
    "is_encoder_decoder": False,
    "tie_word_embeddings": True,
    "torch_dtype": None,
    "quantization_config": None,
}
# A field SGLang reads with getattr(..., default) must stay absent when the checkpoint and
# the class do not set it; these base fields are the exception transformers makes.
_ABSENT_UNLESS_SET = frozenset({"quantization_config"})
_UNKNOWN_TYPE = (
    "The checkpoint you are trying to load has model type `{}` but Transformers does not "
    "recognize this architecture. This could be because of an issue with the checkpoint, "
    "or because your version of Transformers is out of date."
)
_REMOTE_CODE = (
    "The repository {} contains custom code which must be executed to correctly load the "
    "model. You can inspect the repository content at {} .\n Please pass the argument "
    "`trust_remote_code=True` to allow custom code to be run."
)


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:3] if part.isdigit())


class HfWorld:
    """transformers `version`'s view of configs, plus SGLang release `source_root`'s own
    config classes. One per runtime."""

    def __init__(self, version: str, source_root: Path) -> None:
        self.version = version
        self.transformers = transformers_facts(version)
        self.sglang = sglang_config_facts(source_root)
        self.source_root = source_root
        self.registered: dict[str, type] = {}  # AutoConfig.register: model_type -> class
        self.sglang_files = _class_files(source_root)  # class name -> module name
        self.failed_modules: dict[str, str] = {}  # config modules that did not run: why
        self._classes: dict[tuple[str, str], type] = {}
        world = self

        class PretrainedConfig(_StandInConfig):
            _world = world

        self.base = PretrainedConfig
        self.auto_config = _auto_config_class(self)

    # -- classes -------------------------------------------------------------------
    def transformers_class(self, name: str) -> type | None:
        if name not in self.transformers.classes:
            return None
        return self._make("transformers", name, self.transformers)

    def sglang_class(self, name: str) -> type | None:
        """SGLang's config class `name`: the release's own class where its module runs
        over this stand-in (see _ConfigsModule), else a stand-in with its declared
        defaults."""
        if name not in self.sglang.classes:
            return None
        module = self.config_module_of(name)
        if module is not None:
            found = module.real_class(name)
            if found is not None:
                return found
        return self._make("sglang", name, self.sglang)

    def config_module_of(self, name: str) -> _ConfigsModule | None:
        """The module of sglang/srt/configs defining class `name` (imported)."""
        module_name = self.sglang_files.get(name)
        if module_name is None:
            return None
        import importlib

        module = importlib.import_module(module_name)
        return module if isinstance(module, _ConfigsModule) else None

    def remote_class(self, reference: str, model_type: str) -> type:
        """The class `auto_map` names: remote code, of which only the fields are known."""
        name = reference.rsplit(".", 1)[-1]
        key = ("remote", f"{reference}|{model_type}")
        if key not in self._classes:
            self._classes[key] = type(
                name,
                (self.base,),
                {"model_type": model_type, "_origin": f"remote code {reference}"},
            )
        return self._classes[key]

    def _make(self, origin: str, name: str, facts: ConfigFacts) -> type:
        key = (origin, name)
        if key in self._classes:
            return self._classes[key]
        declared = facts.classes[name]
        bases: list[type] = []
        for base in declared.bases:
            found = (
                self._make(origin, base, facts)
                if base in facts.classes and base != name
                else self.transformers_class(base)
                if origin == "sglang"
                else None
            )
            if found is not None:
                bases.append(found)
        if not bases:
            bases.append(self.base)
        namespace = {
            "_origin": f"{facts.origin}: {name}",
            "_defaults": facts.resolved_defaults(name),
            "_sub_configs": dict(declared.sub_configs),
            "_attribute_map": dict(declared.attribute_map),
            "_facts": facts,
        }
        model_type = facts.model_type_of(name)
        if model_type is not None:
            namespace["model_type"] = model_type
        cls = type(name, tuple(bases), namespace)
        self._classes[key] = cls
        return cls

    def class_for_type(self, model_type: str) -> type | None:
        """What CONFIG_MAPPING[model_type] returns: SGLang's registration first."""
        if model_type in self.registered:
            return self.registered[model_type]
        name = self.transformers.model_types.get(model_type)
        return self.transformers_class(name) if name else None

    def knows(self, model_type: str) -> bool:
        return model_type in self.registered or model_type in self.transformers.model_types

    # -- modules -------------------------------------------------------------------
    def transformers_module(self, name: str = "transformers") -> types.ModuleType:
        return _TransformersModule(name, self)

    def transformers_modules(self) -> dict[str, types.ModuleType]:
        """`transformers` and the submodules SGLang's config code imports from."""
        names = (
            "transformers", "transformers.configuration_utils", "transformers.models",
            "transformers.models.auto", "transformers.models.auto.configuration_auto",
            "transformers.utils",
        )  # fmt: skip
        return {name: _TransformersModule(name, self) for name in names}

    def config_modules(self) -> dict[str, types.ModuleType]:
        """`sglang.srt.configs` and each of its files not run for real, answering with
        this world's stand-ins for SGLang's config classes."""
        root = self.source_root / "sglang/srt/configs"
        # The package runs its real __init__ too: importing it defines every config
        # class, with the side effects some modules have (lfm2 overrides transformers'
        # CONFIG_MAPPING entry, for one).
        modules: dict[str, types.ModuleType] = {
            "sglang.srt.configs": _ConfigsModule("sglang.srt.configs", self, root / "__init__.py")
        }
        for file in sorted(root.rglob("*.py")):
            parts = file.relative_to(self.source_root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join(parts)
            if name != "sglang.srt.configs":
                modules[name] = _ConfigsModule(name, self, file)
        return modules


class _StandInConfig:
    """transformers' PretrainedConfig as SGLang uses it (see the module docstring)."""

    model_type: ClassVar[str] = ""
    _world: ClassVar[HfWorld]
    _origin: ClassVar[str] = "transformers PretrainedConfig"
    _defaults: ClassVar[dict[str, Any]] = {}
    _sub_configs: ClassVar[dict[str, str]] = {}
    _attribute_map: ClassVar[dict[str, str]] = {}
    _facts: ClassVar[ConfigFacts | None] = None

    def __init__(self, **kwargs: Any) -> None:
        # SGLang's own classes run their real __init__, which sets fields before calling
        # this one: only what is still unset takes a default.
        present = vars(self)
        for key, value in _BASE_FIELDS.items():
            if key not in _ABSENT_UNLESS_SET and key not in present:
                object.__setattr__(self, key, value)
        for key, value in self._defaults.items():
            if key not in self._sub_configs and key not in present:
                setattr(self, key, _copy(value))
        for key, class_name in self._sub_configs.items():
            value = kwargs.pop(key, None)
            if isinstance(value, _StandInConfig) or (value is None and key != "text_config"):
                if value is None:
                    value = self._sub_config(class_name, {})
                setattr(self, key, value)
            elif isinstance(value, dict):
                setattr(self, key, self._sub_config(class_name, value))
            else:
                # transformers builds a missing text_config from the top-level fields
                # (Qwen2.5-VL's flat config.json); the fields stay on the parent too.
                setattr(self, key, self._sub_config(class_name, dict(kwargs)))
        for key, value in kwargs.items():
            setattr(self, key, value)
        # transformers 4.56+ reads the checkpoint dtype as `dtype` (alias of torch_dtype).
        if "dtype" not in vars(self):
            object.__setattr__(self, "dtype", vars(self).get("torch_dtype"))

    def _sub_config(self, class_name: str, fields: dict[str, Any]) -> _StandInConfig:
        world = self._world
        cls: type | None = None
        if class_name == "AutoConfig":
            sub_type = fields.get("model_type")
            cls = world.class_for_type(sub_type) if isinstance(sub_type, str) else None
        elif self._facts is not None and self._facts is world.sglang:
            cls = world.sglang_class(class_name) or world.transformers_class(class_name)
        else:
            cls = world.transformers_class(class_name)
        fields = {k: v for k, v in fields.items() if k != "model_type"}
        return (cls or world.base)(**fields)

    # attribute_map aliases read and write through, as transformers' __getattribute__ does
    def __getattr__(self, name: str) -> Any:
        mapped = type(self)._attribute_map.get(name)
        if mapped is not None and mapped != name:
            return getattr(self, mapped)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        mapped = type(self)._attribute_map.get(name)
        object.__setattr__(self, mapped if mapped else name, value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._origin}, model_type={self.model_type!r})"

    # -- the PretrainedConfig API SGLang calls ---------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out = {"model_type": self.model_type}
        for key, value in vars(self).items():
            out[key] = value.to_dict() if isinstance(value, _StandInConfig) else _copy(value)
        return out

    def update(self, values: Mapping[str, Any]) -> None:
        for key, value in values.items():
            setattr(self, key, value)

    def get_text_config(self, decoder: bool | None = None, encoder: bool | None = None) -> Any:
        names: tuple[str, ...] = ()
        if decoder is not False:
            names += ("decoder", "generator", "text_config")
        if encoder is not False:
            names += ("text_encoder",)
        found = [n for n in names if getattr(self, n, None) is not None]
        if len(found) > 1:
            raise ValueError(f"Multiple text configs found: {found}")
        return getattr(self, found[0]) if found else self

    @staticmethod
    def get_config_dict(path: Any, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        return read_config(path), kwargs

    @classmethod
    def from_dict(cls, config_dict: Mapping[str, Any], **kwargs: Any) -> _StandInConfig:
        fields = {k: v for k, v in dict(config_dict).items() if k != "model_type"}
        for key in ("return_unused_kwargs", "_from_auto", "name_or_path", "revision"):
            kwargs.pop(key, None)
        fields.update({k: v for k, v in kwargs.items() if not k.startswith("_")})
        return cls(**fields)

    @classmethod
    def from_pretrained(cls, path: Any, **kwargs: Any) -> _StandInConfig:
        for key in ("trust_remote_code", "revision", "code_revision", "cache_dir", "token"):
            kwargs.pop(key, None)
        return cls.from_dict(read_config(path), **kwargs)

    @classmethod
    def register_for_auto_class(cls, auto_class: str = "AutoConfig") -> None:
        pass


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def read_config(path: Any) -> dict[str, Any]:
    """transformers' get_config_dict for a local directory or config file."""
    location = Path(str(path))
    file = location / "config.json" if location.is_dir() else location
    if not file.is_file():
        raise OSError(f"Can't load the configuration of '{path}': no file named config.json")
    data = json.loads(file.read_text())
    if not isinstance(data, dict):
        raise OSError(f"{file} is not a JSON object")
    return data


def _auto_config_class(world: HfWorld) -> type:
    explicit_local_wins = _version_tuple(world.version) >= (5, 6)

    class AutoConfig:
        """transformers' AutoConfig of the pinned version (see the module docstring)."""

        @classmethod
        def from_pretrained(
            cls, path: Any, trust_remote_code: bool | None = None, **kwargs: Any
        ) -> Any:
            config_dict = read_config(path)
            model_type = config_dict.get("model_type")
            auto_map = config_dict.get("auto_map") or {}
            has_remote = isinstance(auto_map, dict) and "AutoConfig" in auto_map
            has_local = isinstance(model_type, str) and world.knows(model_type)
            if has_remote:
                if trust_remote_code is None:
                    trust_remote_code = False  # transformers prompts; a server cannot answer
                if not has_local and not trust_remote_code:
                    raise ValueError(_REMOTE_CODE.format(path, path))
            explicit_local = has_local and model_type in world.registered
            if has_remote and trust_remote_code and not (explicit_local_wins and explicit_local):
                remote = world.remote_class(auto_map["AutoConfig"], str(model_type))
                return remote.from_dict(config_dict)
            if isinstance(model_type, str):
                if model_type == "mistral" and "layer_types" in config_dict:
                    model_type = config_dict["model_type"] = "ministral"
                found = world.class_for_type(model_type)
                if found is None:
                    raise ValueError(_UNKNOWN_TYPE.format(model_type))
                return found.from_dict(config_dict)
            raise ValueError(
                f"Unrecognized model in {path}. Should have a `model_type` key in its config.json"
            )

        @classmethod
        def for_model(cls, model_type: str, *args: Any, **kwargs: Any) -> Any:
            found = world.class_for_type(model_type)
            if found is None:
                raise ValueError(f"Unrecognized model identifier: {model_type}.")
            return found(*args, **kwargs)

        @staticmethod
        def register(model_type: str, config: type, exist_ok: bool = False) -> None:
            if getattr(config, "model_type", model_type) != model_type:
                raise ValueError(
                    "The config you are passing has a `model_type` attribute that is not "
                    f"consistent with the model type you passed (config has "
                    f"{config.model_type} and you passed {model_type}. Fix one of those so "
                    "they match!"
                )
            if model_type in world.transformers.model_types and not exist_ok:
                raise ValueError(
                    f"'{model_type}' is already used by a Transformers config, pick another name."
                )
            world.registered[model_type] = config

    return AutoConfig


class _ConfigMapping(Mapping[str, type]):
    def __init__(self, world: HfWorld) -> None:
        self._world = world

    @property
    def _extra_content(self) -> dict[str, type]:
        """What transformers' CONFIG_MAPPING consults first (SGLang writes into it)."""
        return self._world.registered

    def __getitem__(self, key: str) -> type:
        found = self._world.class_for_type(key)
        if found is None:
            raise KeyError(key)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter({*self._world.transformers.model_types, *self._world.registered})

    def __len__(self) -> int:
        return len({*self._world.transformers.model_types, *self._world.registered})

    def register(self, key: str, value: type, exist_ok: bool = False) -> None:
        self._world.auto_config.register(key, value, exist_ok=exist_ok)


# Names that are transformers API rather than config classes; their values here.
_GENERIC = frozenset({"PretrainedConfig", "PreTrainedConfig"})


class _GenerationConfig:
    """A checkpoint without generation_config.json: transformers raises OSError."""

    @classmethod
    def from_pretrained(cls, *args: Any, **kwargs: Any) -> Any:
        raise OSError("generation_config.json not found (the harness ships config.json only)")


_LOGGING = types.ModuleType("transformers.utils.logging")
_LOGGING.get_logger = logging.getLogger  # type: ignore[attr-defined]
_LOGGING.getLogger = logging.getLogger  # type: ignore[attr-defined]
_VALIDATORS = frozenset({"layer_type_validation", "rope_config_validation"})


def _no_check(*args: Any, **kwargs: Any) -> None:
    return None


_AUTO_REGISTRIES: dict[str, type] = {}


def _auto_registry(name: str) -> type:
    """transformers' other Auto classes: SGLang registers its processors with them at
    import; anything else on them is a harness stub."""
    if name not in _AUTO_REGISTRIES:

        def register(*args: Any, **kwargs: Any) -> None:
            return None

        placeholder = stubs._inert_class(f"transformers.{name}")
        _AUTO_REGISTRIES[name] = type(name, (placeholder,), {"register": staticmethod(register)})
    return _AUTO_REGISTRIES[name]


def _cached_file(path_or_repo: object, filename: str, **kwargs: Any) -> str | None:
    """`transformers.utils.cached_file` over the zoo's local checkpoint directory: the file's
    path, or, for an optional file the checkpoint does not ship, None (what transformers
    answers with `_raise_exceptions_for_missing_entries=False`)."""
    candidate = Path(str(path_or_repo)) / filename
    if candidate.is_file():
        return str(candidate)
    if kwargs.get("_raise_exceptions_for_missing_entries", True):
        raise OSError(f"{path_or_repo} does not appear to have a file named {filename}")
    return None


class _TransformersModule(stubs._PlaceholderModule):
    def __init__(self, name: str, world: HfWorld) -> None:
        super().__init__(name)
        self.__path__ = []
        self._world = world
        self.__version__ = world.version

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        world = self._world
        if name in _GENERIC:
            return world.base
        if name == "AutoConfig":
            return world.auto_config
        if name == "GenerationConfig":
            return _GenerationConfig
        if name == "CONFIG_MAPPING":
            return _ConfigMapping(world)
        if name == "logging":  # transformers.utils.logging
            return _LOGGING
        if name == "cached_file":  # transformers.utils.cached_file
            return _cached_file
        if name in _VALIDATORS:  # checks of a config's own fields; the zoo's are valid
            return _no_check
        if name.startswith("Auto"):  # AutoProcessor, AutoTokenizer, ...: registries
            return _auto_registry(name)
        found = world.transformers_class(name)
        if found is not None:
            return found
        if name.endswith("Config"):  # a config class this version does not have
            raise AttributeError(f"transformers {world.version} has no {name}")
        return super().__getattr__(name)


class _ConfigsModule(stubs._PlaceholderModule):
    """One of SGLang's `sglang/srt/configs` modules.

    Its file runs for real on first use, over the stand-in transformers (config
    classes then are SGLang's own, with their real `__init__` and properties); if it
    cannot run here, its config classes are stand-ins with their declared defaults, a
    module-level tuple of them is that tuple, and the rest are placeholders. The package
    itself (`sglang.srt.configs`) answers each class from the module defining it.
    """

    def __init__(self, name: str, world: HfWorld, file: Path | None) -> None:
        super().__init__(name)
        self.__path__ = []
        self._world = world
        self._file = file
        self._ran: bool | None = None  # None: not tried yet
        self._tuples: dict[str, tuple[str, ...]] | None = None

    def real_class(self, name: str) -> type | None:
        if self._file is None or not self._run():
            return None
        found = self.__dict__.get(name)
        return found if isinstance(found, type) else None

    def _run(self) -> bool:
        if self._ran is None:
            assert self._file is not None
            namespace: dict[str, Any] = {
                "__name__": self.__name__,
                "__file__": str(self._file),
                "__package__": self.__name__.rpartition(".")[0],
                "__builtins__": __builtins__,
            }
            uses = len(stubs.USES)
            try:
                exec(compile(self._file.read_text(), str(self._file), "exec"), namespace)
            except Exception as exc:  # the module needs more than the stand-in offers
                self._world.failed_modules[self.__name__] = f"{type(exc).__name__}: {exc}"
                self._ran = False
            else:
                self.__dict__.update(namespace)
                self._ran = True
            # Placeholders touched while defining the module are not start-up decisions.
            del stubs.USES[uses:]
        return self._ran

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if self._file is not None and self._run() and name in self.__dict__:
            return self.__dict__[name]
        found = self._world.sglang_class(name)
        if found is not None:
            return found
        names = self._class_tuples().get(name)
        if names is not None:
            classes = tuple(self._world.sglang_class(n) for n in names)
            if all(c is not None for c in classes):
                return classes
        return super().__getattr__(name)

    def _class_tuples(self) -> dict[str, tuple[str, ...]]:
        if self._tuples is None:
            self._tuples = {}
            if self._file is not None:
                for node in ast.parse(self._file.read_text()).body:
                    if (
                        isinstance(node, ast.Assign)
                        and len(node.targets) == 1
                        and isinstance(node.targets[0], ast.Name)
                        and isinstance(node.value, (ast.Tuple, ast.List))
                        and node.value.elts
                        and all(isinstance(e, ast.Name) for e in node.value.elts)
                    ):
                        elts = tuple(e.id for e in node.value.elts)  # type: ignore[attr-defined]
                        self._tuples[node.targets[0].id] = elts
        return self._tuples


@functools.cache
def _class_files(source_root: Path) -> dict[str, str]:
    """Class name -> the sglang/srt/configs module that defines it (first definition)."""
    found: dict[str, str] = {}
    root = source_root / "sglang/srt/configs"
    for file in sorted(root.rglob("*.py")):
        if file.name == "__init__.py":
            continue
        module = ".".join(file.relative_to(source_root).with_suffix("").parts)
        for node in ast.parse(file.read_text()).body:
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, module)
    return found
